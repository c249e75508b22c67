import { PartialType } from '@nestjs/swagger';
import { CreateWorkflowDto } from './create-workflow.dto.js';

/** Any subset of the create fields; omitted fields keep their values. */
export class UpdateWorkflowDto extends PartialType(CreateWorkflowDto) {}
