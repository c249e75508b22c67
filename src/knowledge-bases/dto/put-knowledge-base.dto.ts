import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsObject, IsString, Matches, ValidateNested } from 'class-validator';
import { TextLength } from '../../common/validation/text-length.decorator.js';

export const MAX_ENTRIES = 1000;

export class KnowledgeEntryDto {
  @ApiProperty({ minLength: 1, maxLength: 1000, example: 'How do I reset my password?' })
  @IsString()
  @TextLength(1, 1000)
  @Matches(/\S/, { message: 'question must not be blank' })
  question: string;

  @ApiProperty({ minLength: 1, maxLength: 4000, example: 'Click "Forgot password" on the sign-in page.' })
  @IsString()
  @TextLength(1, 4000)
  @Matches(/\S/, { message: 'answer must not be blank' })
  answer: string;
}

/** The whole knowledge base: PUT replaces every entry. */
export class PutKnowledgeBaseDto {
  @ApiProperty({ type: [KnowledgeEntryDto], minItems: 1, maxItems: MAX_ENTRIES })
  @IsArray()
  @ArrayMinSize(1, { message: 'entries must contain at least 1 entry' })
  @ArrayMaxSize(MAX_ENTRIES, { message: `entries must contain at most ${MAX_ENTRIES} entries` })
  @IsObject({ each: true, message: 'each entry must be an object with question and answer' })
  @ValidateNested({ each: true })
  @Type(() => KnowledgeEntryDto)
  entries: KnowledgeEntryDto[];
}
