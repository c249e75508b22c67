import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiExtraModels, ApiHeader, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/decorators/access.decorators.js';
import { CreatePetForm, PetResponse, UpdatePetDto } from './dto/pet.dto.js';
import { PetsService } from './pets.service.js';

const PET_ERROR = { schema: { type: 'object', properties: { code: { type: 'integer' }, message: { type: 'string' } } } };
const PET_ENVELOPE = { schema: { type: 'object', properties: { code: { type: 'integer', example: 0 }, data: { $ref: '#/components/schemas/PetResponse' } } } };

/** The sample pet store: no /v1 prefix, no credential, and its own `{code, data}` envelope. */
@ApiTags('Pets (sample)')
@ApiExtraModels(PetResponse)
@Public()
@Controller('pet')
export class PetsController {
  constructor(private readonly pets: PetsService) {}

  // Declared before :petId so that "findByStatus" is not taken for an id.
  @Get('findByStatus')
  @ApiOperation({ summary: 'Find pets by status (one or more, comma-separated)' })
  @ApiQuery({ name: 'status', required: true, type: String, example: 'available,pending' })
  @ApiResponse({ status: 200, schema: { type: 'object', properties: { code: { type: 'integer' }, data: { type: 'array', items: { $ref: '#/components/schemas/PetResponse' } } } } })
  @ApiResponse({ status: 400, description: 'Invalid status value', ...PET_ERROR })
  async findByStatus(@Query('status') status: unknown) {
    return { code: 0, data: (await this.pets.findByStatus(status)).map(PetResponse.from) };
  }

  @Get(':petId')
  @ApiOperation({ summary: 'Find a pet by id' })
  @ApiResponse({ status: 200, ...PET_ENVELOPE })
  @ApiResponse({ status: 400, description: 'Invalid ID supplied', ...PET_ERROR })
  @ApiResponse({ status: 404, description: 'Pet not found', ...PET_ERROR })
  async get(@Param('petId') petId: string) {
    return { code: 0, data: PetResponse.from(await this.pets.get(petId)) };
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Add a pet (form-encoded name and status, or the same as JSON)' })
  @ApiConsumes('application/x-www-form-urlencoded', 'application/json')
  @ApiBody({ type: CreatePetForm })
  @ApiResponse({ status: 201, ...PET_ENVELOPE })
  @ApiResponse({ status: 400, description: 'Invalid input', ...PET_ERROR })
  async create(@Body() form: CreatePetForm) {
    return { code: 0, data: PetResponse.from(await this.pets.create(form)) };
  }

  @Put()
  @ApiOperation({ summary: 'Update a pet (JSON; id required, omitted fields kept)' })
  @ApiResponse({ status: 200, ...PET_ENVELOPE })
  @ApiResponse({ status: 400, description: 'Invalid input', ...PET_ERROR })
  @ApiResponse({ status: 404, description: 'Pet not found', ...PET_ERROR })
  async update(@Body() body: UpdatePetDto) {
    return { code: 0, data: PetResponse.from(await this.pets.update(body)) };
  }

  @Delete(':petId')
  @ApiOperation({ summary: 'Delete a pet' })
  @ApiHeader({ name: 'api_key', required: false, description: 'Accepted for compatibility with the sample; not checked' })
  @ApiResponse({ status: 200, schema: { type: 'object', properties: { code: { type: 'integer', example: 0 } } } })
  @ApiResponse({ status: 400, description: 'Invalid ID supplied', ...PET_ERROR })
  @ApiResponse({ status: 404, description: 'Pet not found', ...PET_ERROR })
  async delete(@Param('petId') petId: string) {
    await this.pets.delete(petId);
    return { code: 0 };
  }
}
