import { ApiProperty } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';

export const KNOWLEDGE_BASE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

/** `{name}` of the knowledge-base routes: what an ai_response node's `knowledge_base` refers to. */
export class KnowledgeBaseNameParam {
  @ApiProperty({ pattern: KNOWLEDGE_BASE_NAME.source, example: 'faq', description: 'Case-sensitive, unique in the organization' })
  @IsString()
  @Matches(KNOWLEDGE_BASE_NAME, { message: 'name must be 1-100 characters of A-Z a-z 0-9 _ . -, starting with a letter or digit' })
  name: string;
}
