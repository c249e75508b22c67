import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { KnowledgeBase } from './entities/knowledge-base.entity.js';
import { KnowledgeBasesController } from './knowledge-bases.controller.js';
import { KnowledgeBasesService } from './knowledge-bases.service.js';
import { KnowledgeIndexes } from './knowledge-indexes.js';
import { KNOWLEDGE_RESPONDER } from './knowledge-responder.js';
import { knowledgeResponderProvider } from './knowledge-responder.providers.js';

/** Knowledge-base CRUD, and the responder (chosen by AI_PROVIDER) the execution engine answers with. */
@Module({
  imports: [TypeOrmModule.forFeature([KnowledgeBase])],
  controllers: [KnowledgeBasesController],
  providers: [KnowledgeBasesService, KnowledgeIndexes, knowledgeResponderProvider],
  exports: [KnowledgeBasesService, KNOWLEDGE_RESPONDER],
})
export class KnowledgeBasesModule {}
