import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WorkflowVersion } from './entities/workflow-version.entity.js';
import { Workflow } from './entities/workflow.entity.js';
import { WorkflowsController } from './workflows.controller.js';
import { WorkflowsRepository } from './workflows.repository.js';
import { WorkflowsService } from './workflows.service.js';
import { WorkflowVersionsRepository } from './workflow-versions.repository.js';

@Module({
  imports: [TypeOrmModule.forFeature([Workflow, WorkflowVersion])],
  controllers: [WorkflowsController],
  providers: [WorkflowsService, WorkflowsRepository, WorkflowVersionsRepository],
  exports: [WorkflowsService],
})
export class WorkflowsModule {}
