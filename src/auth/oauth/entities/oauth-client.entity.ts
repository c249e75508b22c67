import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export const TOKEN_ENDPOINT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;
export type TokenEndpointAuthMethod = (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number];
/** What a confidential client registered without a method may use: either way of sending its secret. */
export const SECRET_AUTH_METHODS: readonly TokenEndpointAuthMethod[] = ['client_secret_basic', 'client_secret_post'];

/** The methods a client may authenticate with: the one it registered, or either secret method when it registered none. */
export function acceptedAuthMethods(registered: TokenEndpointAuthMethod | null): readonly TokenEndpointAuthMethod[] {
  return registered === null ? SECRET_AUTH_METHODS : [registered];
}

/** An application registered to obtain OAuth access tokens for users of its organization. */
@Entity({ name: 'oauth_clients' })
export class OAuthClient {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** null for the console's deployment-wide client only (console-client.ts): its grants take the user's organization. */
  @Column({ name: 'organization_id', type: 'uuid', nullable: true })
  organizationId: string | null;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  /** SHA-256 (hex) of the client secret; null for a public client (token_endpoint_auth_method none). */
  @Column({ name: 'secret_hash', type: 'char', length: 64, nullable: true })
  secretHash: string | null;

  @Column({ name: 'redirect_uris', type: 'text', array: true })
  redirectUris: string[];

  @Column({ type: 'text', array: true })
  scopes: string[];

  /** As registered; null when the client registered none: then it may use either secret method (acceptedAuthMethods). */
  @Column({ name: 'token_endpoint_auth_method', type: 'varchar', length: 32, nullable: true })
  tokenEndpointAuthMethod: TokenEndpointAuthMethod | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
