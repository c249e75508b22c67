import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** What an account's settings may hold (validated by channel-account-input.ts). */
export interface ChannelAccountSettings {
  /** The workflow a conversation starts when no trigger matches (for voice: the workflow a call starts). */
  workflow_id?: string;
  /** Messages of one customer within this many ms after the first are handled as one turn (docs/channels.md, "Bursts"); absent or 0: off. */
  burst_window_ms?: number;
  /** Voice accounts: the `<Say>` voice (Twilio's default when unset). */
  voice?: string;
  /** Voice accounts: the language spoken and recognised (Twilio's default, en-US, when unset). */
  language?: string;
}

/**
 * A WhatsApp number, an Instagram account or a phone line the service talks through. Credentials are
 * one sealed JSON object (SecretBox, bound to the row's id); `credentialFields` names those set, which
 * is all a response says of them.
 */
@Entity({ name: 'channel_accounts' })
@Index('idx_channel_accounts_org_created', ['organizationId', 'createdAt', 'id'])
export class ChannelAccount {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 32 })
  channel: string;

  @Column({ type: 'varchar', length: 32 })
  provider: string;

  @Column({ name: 'credentials_sealed', type: 'text' })
  credentialsSealed: string;

  @Column({ name: 'credential_fields', type: 'text', array: true, default: () => `'{}'` })
  credentialFields: string[];

  @Column({ name: 'verify_token_sealed', type: 'text', nullable: true })
  verifyTokenSealed: string | null;

  @Column({ type: 'jsonb', default: () => `'{}'::jsonb` })
  settings: ChannelAccountSettings;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
