import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { ApiClosedSchema } from '../../common/http/openapi/schema-markers.js';
import { TRIGGER_TYPES } from '../../triggers/entities/trigger.entity.js';
import { MAX_NODES, NODE_ID } from '../workflow-graph.validator.js';
import { FORM_FIELD_TYPES, MAX_FORM_FIELDS } from '../node-types/form.node-type.js';
import { MAX_MESSAGE_LENGTH } from '../node-types/message.node-type.js';

// Schemas for the documentation only: the graph validator and the node types (node-types/*.ts), not
// class-validator, check these, so each one repeats their rules by hand. Both refuse unknown keys.

/** A non-empty string that is not only whitespace (nonEmptyString in node-type.ts). */
const text = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength, pattern: '\\S' }) as const;
const NODE_ID_SCHEMA = { type: 'string', pattern: NODE_ID.source, description: 'Unique within the workflow; the first node is the entry' } as const;
const NEXT_SCHEMA = { type: 'string', pattern: NODE_ID.source, description: 'id of the following node (no cycles)' } as const;

@ApiClosedSchema()
export class FormFieldDoc {
  @ApiProperty({ pattern: '^[A-Za-z][A-Za-z0-9_]{0,63}$', description: 'Unique within the form' }) name: string;
  @ApiProperty({ enum: FORM_FIELD_TYPES }) type: string;
  @ApiPropertyOptional() required?: boolean;
  @ApiPropertyOptional(text(500)) label?: string;
}

@ApiClosedSchema()
export class MessageNodeDoc {
  @ApiProperty(NODE_ID_SCHEMA) id: string;
  @ApiProperty({ enum: ['message'] }) type: string;
  @ApiProperty({ ...text(MAX_MESSAGE_LENGTH), description: 'The text sent' }) content: string;
  @ApiPropertyOptional(NEXT_SCHEMA) next?: string;
}

@ApiClosedSchema()
export class AiResponseNodeDoc {
  @ApiProperty(NODE_ID_SCHEMA) id: string;
  @ApiProperty({ enum: ['ai_response'] }) type: string;
  @ApiProperty({ ...text(200), description: 'The knowledge base answering' }) knowledge_base: string;
  @ApiPropertyOptional(NEXT_SCHEMA) next?: string;
}

@ApiClosedSchema()
export class FormNodeDoc {
  @ApiProperty(NODE_ID_SCHEMA) id: string;
  @ApiProperty({ enum: ['form'] }) type: string;
  @ApiProperty({ type: [FormFieldDoc], minItems: 1, maxItems: MAX_FORM_FIELDS, description: 'The fields asked' }) fields: FormFieldDoc[];
  @ApiPropertyOptional(NEXT_SCHEMA) next?: string;
}

const NODES = {
  type: 'array',
  maxItems: MAX_NODES,
  items: {
    oneOf: [MessageNodeDoc, AiResponseNodeDoc, FormNodeDoc].map((doc) => ({ $ref: getSchemaPath(doc) })),
    discriminator: {
      propertyName: 'type',
      mapping: { message: getSchemaPath(MessageNodeDoc), ai_response: getSchemaPath(AiResponseNodeDoc), form: getSchemaPath(FormNodeDoc) },
    },
  },
} as const;

@ApiClosedSchema()
export class WorkflowTriggerDoc {
  @ApiProperty({ enum: TRIGGER_TYPES }) type: string;
  @ApiPropertyOptional({ type: 'array', items: text(200) }) keywords?: string[];
}

/** What a client sends: `nodes` may be left out (no nodes yet). */
@ApiClosedSchema()
@ApiExtraModels(MessageNodeDoc, AiResponseNodeDoc, FormNodeDoc)
export class WorkflowConfigurationDoc {
  @ApiPropertyOptional({ type: WorkflowTriggerDoc }) trigger?: WorkflowTriggerDoc;
  @ApiPropertyOptional({ ...NODES, description: 'The nodes in order; absent means none' }) nodes?: unknown[];
}

/** What the service answers: `nodes` always present. */
@ApiClosedSchema()
@ApiExtraModels(MessageNodeDoc, AiResponseNodeDoc, FormNodeDoc)
export class WorkflowConfigurationResponse {
  @ApiPropertyOptional({ type: WorkflowTriggerDoc }) trigger?: WorkflowTriggerDoc;
  @ApiProperty(NODES) nodes: unknown[];
}
