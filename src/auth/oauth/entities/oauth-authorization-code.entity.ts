import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A code issued by POST /oauth/authorize: stored hashed, single use, bound to client, redirect URI and PKCE challenge. */
@Entity({ name: 'oauth_authorization_codes' })
export class OAuthAuthorizationCode {
  /** Also the grant id of every token issued from the code. */
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'code_hash', type: 'char', length: 64 })
  codeHash: string;

  @Column({ name: 'client_id', type: 'uuid' })
  clientId: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ name: 'redirect_uri', type: 'text' })
  redirectUri: string;

  @Column({ type: 'text', array: true })
  scopes: string[];

  /** The S256 challenge; null when the (confidential) client sent none. */
  @Column({ name: 'code_challenge', type: 'varchar', length: 128, nullable: true })
  codeChallenge: string | null;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'used_at', type: 'timestamptz', nullable: true })
  usedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
