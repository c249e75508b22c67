import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Pet } from './entities/pet.entity.js';
import { PetsController } from './pets.controller.js';
import { PetsService } from './pets.service.js';

@Module({ imports: [TypeOrmModule.forFeature([Pet])], controllers: [PetsController], providers: [PetsService] })
export class PetsModule {}
