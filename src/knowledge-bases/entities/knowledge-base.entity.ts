import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export interface KnowledgeEntry {
  question: string;
  answer: string;
}

/** Question/answer pairs an ai_response node answers from, named per organization. */
@Entity({ name: 'knowledge_bases' })
@Index('uq_knowledge_bases_org_name', ['organizationId', 'name'], { unique: true })
export class KnowledgeBase {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ type: 'jsonb' })
  entries: KnowledgeEntry[];

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
