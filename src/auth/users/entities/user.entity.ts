import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A person of an organization who can sign in on the OAuth consent page. */
@Entity({ name: 'users' })
export class User {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  /** Stored lower-cased; unique across the service because the consent page signs in by email alone. */
  @Column({ type: 'varchar', length: 320, unique: true })
  email: string;

  /** scrypt, with its parameters and salt: see password-hasher.ts. */
  @Column({ name: 'password_hash', type: 'text' })
  passwordHash: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
