import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A revoked access-token jti, or a revoked grant id (every access token of the grant), until its tokens expire. */
@Entity({ name: 'oauth_revoked_tokens' })
export class OAuthRevokedToken {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;
}
