import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, type Repository } from 'typeorm';
import type { CreatePetForm, UpdatePetDto } from './dto/pet.dto.js';
import { PET_STATUSES, type Pet as PetEntity, Pet, type PetStatus } from './entities/pet.entity.js';
import { InvalidPetIdError, InvalidPetStatusError, PetNotFoundError } from './pets.errors.js';

/** A path id: a positive int64 that JavaScript holds exactly. */
export function parsePetId(raw: string): string {
  if (!/^\d{1,16}$/.test(raw)) throw new InvalidPetIdError();
  const id = Number(raw);
  if (id < 1 || !Number.isSafeInteger(id)) throw new InvalidPetIdError();
  return String(id);
}

/** `status` as one value, a comma-separated list, or repeated parameters. */
export function parseStatuses(raw: unknown): PetStatus[] {
  const values = (Array.isArray(raw) ? raw : [raw]).flatMap((v) => (typeof v === 'string' ? v.split(',') : [v]));
  const statuses = values.map((v) => (typeof v === 'string' ? v.trim() : v)).filter((v) => v !== '');
  if (statuses.length === 0 || !statuses.every((s) => (PET_STATUSES as readonly unknown[]).includes(s))) {
    throw new InvalidPetStatusError();
  }
  return [...new Set(statuses as PetStatus[])];
}

@Injectable()
export class PetsService {
  constructor(@InjectRepository(Pet) private readonly pets: Repository<Pet>) {}

  async get(rawId: string): Promise<PetEntity> {
    const pet = await this.pets.findOne({ where: { id: parsePetId(rawId) } });
    if (!pet) throw new PetNotFoundError();
    return pet;
  }

  create(form: CreatePetForm): Promise<PetEntity> {
    return this.pets.save(this.pets.create({ name: form.name, status: form.status, category: {}, photoUrls: [], tags: [] }));
  }

  async update(dto: UpdatePetDto): Promise<PetEntity> {
    const pet = await this.pets.findOne({ where: { id: String(dto.id) } });
    if (!pet) throw new PetNotFoundError();
    if (dto.name !== undefined) pet.name = dto.name;
    if (dto.status !== undefined) pet.status = dto.status;
    if (dto.category !== undefined) pet.category = { ...dto.category };
    if (dto.photoUrls !== undefined) pet.photoUrls = dto.photoUrls;
    if (dto.tags !== undefined) pet.tags = dto.tags.map((t) => ({ ...t }));
    return this.pets.save(pet);
  }

  async delete(rawId: string): Promise<void> {
    const result = await this.pets.delete({ id: parsePetId(rawId) });
    if (!result.affected) throw new PetNotFoundError();
  }

  findByStatus(raw: unknown): Promise<PetEntity[]> {
    return this.pets.find({ where: { status: In(parseStatuses(raw)) }, order: { id: 'ASC' } });
  }
}
