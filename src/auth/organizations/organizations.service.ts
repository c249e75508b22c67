import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { isUniqueViolation } from '../../database/postgres-errors.js';
import { OrganizationAlreadyExistsError } from '../auth.errors.js';
import { Organization } from './entities/organization.entity.js';

@Injectable()
export class OrganizationsService {
  constructor(@InjectRepository(Organization) private readonly organizations: Repository<Organization>) {}

  async create(name: string): Promise<Organization> {
    try {
      return await this.organizations.save(this.organizations.create({ name }));
    } catch (error) {
      if (isUniqueViolation(error)) throw new OrganizationAlreadyExistsError();
      throw error;
    }
  }

  findById(id: string): Promise<Organization | null> {
    return this.organizations.findOne({ where: { id } });
  }

  /** Sets the organization's execution retention override (null: the service's EXECUTION_RETENTION; 0: keep everything). */
  async setExecutionRetention(id: string, retentionMs: number | null): Promise<void> {
    await this.organizations.update({ id }, { executionRetentionMs: retentionMs === null ? null : String(retentionMs) });
  }

  /** Returns the organization with this name, creating it if needed (safe under concurrent starts). */
  async ensure(name: string): Promise<Organization> {
    await this.organizations.createQueryBuilder().insert().values({ name }).orIgnore().execute();
    return this.organizations.findOneOrFail({ where: { name } });
  }
}
