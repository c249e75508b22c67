import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { JsonWebKey } from 'node:crypto';

/** A server-to-server client: its public key and the scopes its tokens may be granted. */
@Entity({ name: 'jwt_clients' })
@Index('idx_jwt_clients_org_created', ['organizationId', 'createdAt'])
export class JwtClient {
  /** The application id: the `iss` of the client's tokens. */
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  /** The public key as a JWK, whichever form (PEM or JWK) it was registered in. */
  @Column({ name: 'public_key', type: 'jsonb' })
  publicKey: JsonWebKey;

  /** The algorithms this key may verify: RS256 and PS256 for RSA, ES256 for P-256, EdDSA for Ed25519. */
  @Column({ type: 'text', array: true })
  algorithms: string[];

  @Column({ type: 'text', array: true })
  scopes: string[];

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
