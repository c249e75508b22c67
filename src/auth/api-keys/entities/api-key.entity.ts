import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { PermissionLevel } from '../../access.js';

@Entity({ name: 'api_keys' })
@Index('idx_api_keys_org_created', ['organizationId', 'createdAt'])
export class ApiKey {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  /** The first characters of the key, shown in listings so a person can tell keys apart. */
  @Column({ type: 'varchar', length: 16 })
  prefix: string;

  /** SHA-256 (hex) of the whole key; the key itself is never stored. */
  @Column({ name: 'key_hash', type: 'char', length: 64, unique: true })
  keyHash: string;

  @Column({ name: 'permission_level', type: 'varchar', length: 20 })
  permissionLevel: PermissionLevel;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
