import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsArray, IsIn, IsInt, IsObject, IsString, Max, Min, ValidateNested, ArrayMaxSize } from 'class-validator';
import { PET_STATUSES, type Pet, type PetStatus } from '../entities/pet.entity.js';
import { IsOmittable } from '../../common/validation/is-omittable.decorator.js';
import { TextLength } from '../../common/validation/text-length.decorator.js';

const STATUS_MESSAGE = `status must be one of ${PET_STATUSES.join(', ')}`;

/**
 * May be omitted, but when present must be valid. Unlike `@IsOptional()`, null is validated (and
 * refused): a null name, status or list would otherwise reach the NOT NULL columns and fail as a 500.
 */

export class PetRefDto {
  @ApiPropertyOptional({ minimum: 1, format: 'int64' })
  @IsOmittable()
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  id?: number;

  @ApiPropertyOptional({ maxLength: 200 })
  @IsOmittable()
  @IsString()
  @TextLength(0, 200)
  name?: string;
}

/** POST /pet, form-encoded. */
export class CreatePetForm {
  @ApiProperty({ minLength: 1, maxLength: 200 })
  @IsString()
  @TextLength(1, 200)
  name: string;

  @ApiProperty({ enum: PET_STATUSES })
  @IsIn(PET_STATUSES as unknown as string[], { message: STATUS_MESSAGE })
  status: PetStatus;
}

/** PUT /pet, JSON: id required, omitted fields kept. */
export class UpdatePetDto {
  @ApiProperty({ minimum: 1, format: 'int64' })
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  id: number;

  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @IsOmittable()
  @IsString()
  @TextLength(1, 200)
  name?: string;

  @ApiPropertyOptional({ enum: PET_STATUSES })
  @IsOmittable()
  @IsIn(PET_STATUSES as unknown as string[], { message: STATUS_MESSAGE })
  status?: PetStatus;

  @ApiPropertyOptional({ type: PetRefDto })
  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => PetRefDto)
  category?: PetRefDto;

  @ApiPropertyOptional({ type: [String] })
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @TextLength(0, 2000, { each: true })
  photoUrls?: string[];

  @ApiPropertyOptional({ type: [PetRefDto] })
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => PetRefDto)
  tags?: PetRefDto[];
}

export class PetResponse {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty() name: string;
  @ApiProperty({ type: PetRefDto }) category: PetRefDto;
  @ApiProperty({ type: [String] }) photoUrls: string[];
  @ApiProperty({ type: [PetRefDto] }) tags: PetRefDto[];
  @ApiProperty({ enum: PET_STATUSES }) status: PetStatus;

  static from(pet: Pet): PetResponse {
    return { id: Number(pet.id), name: pet.name, category: pet.category, photoUrls: pet.photoUrls, tags: pet.tags, status: pet.status };
  }
}

/** The sample's error envelope (docs/API.md, "Errors"): the HTTP status as `code`. */
export class PetErrorResponse {
  @ApiProperty({ type: 'integer', example: 404 }) code: number;
  @ApiProperty({ example: 'Pet not found' }) message: string;
}
