import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export const PET_STATUSES = ['available', 'pending', 'sold'] as const;
export type PetStatus = (typeof PET_STATUSES)[number];

export interface PetCategory {
  id?: number;
  name?: string;
}

export interface PetTag {
  id?: number;
  name?: string;
}

/** The sample pet store's pets: global (no organization), as the sample has no credential. */
@Entity({ name: 'pets' })
@Index('idx_pets_status', ['status', 'id'])
export class Pet {
  /** int64: pg returns bigint as a string; the response maps it to a number (ids stay below 2^53). */
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ type: 'varchar', length: 16 })
  status: PetStatus;

  @Column({ type: 'jsonb', default: () => `'{}'::jsonb` })
  category: PetCategory;

  @Column({ name: 'photo_urls', type: 'jsonb', default: () => `'[]'::jsonb` })
  photoUrls: string[];

  @Column({ type: 'jsonb', default: () => `'[]'::jsonb` })
  tags: PetTag[];

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
