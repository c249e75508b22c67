import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { TRIGGER_TYPES } from '../workflow-graph.validator.js';
import { FORM_FIELD_TYPES } from '../node-types/form.node-type.js';

// Schemas for the documentation only: the graph validator, not class-validator, checks these.

export class FormFieldDoc {
  @ApiProperty({ pattern: '^[A-Za-z][A-Za-z0-9_]{0,63}$' }) name: string;
  @ApiProperty({ enum: FORM_FIELD_TYPES }) type: string;
  @ApiPropertyOptional() required?: boolean;
  @ApiPropertyOptional() label?: string;
}

export class WorkflowNodeDoc {
  @ApiProperty({ description: 'Unique within the workflow; the first node is the entry' }) id: string;
  @ApiProperty({ enum: ['message', 'ai_response', 'form'] }) type: string;
  @ApiPropertyOptional({ description: 'message: the text sent' }) content?: string;
  @ApiPropertyOptional({ description: 'ai_response: the knowledge base answering' }) knowledge_base?: string;
  @ApiPropertyOptional({ type: [FormFieldDoc], description: 'form: the fields asked' }) fields?: FormFieldDoc[];
  @ApiPropertyOptional({ description: 'id of the following node' }) next?: string;
}

export class WorkflowTriggerDoc {
  @ApiProperty({ enum: TRIGGER_TYPES }) type: string;
  @ApiPropertyOptional({ type: [String] }) keywords?: string[];
}

export class WorkflowConfigurationDoc {
  @ApiPropertyOptional({ type: WorkflowTriggerDoc }) trigger?: WorkflowTriggerDoc;
  @ApiProperty({ type: [WorkflowNodeDoc] }) nodes: WorkflowNodeDoc[];
}
