import { DomainError } from '../common/errors/domain-error.js';

export class PetNotFoundError extends DomainError {
  constructor() {
    super('PET_NOT_FOUND', 404, 'Pet not found');
  }
}

export class InvalidPetIdError extends DomainError {
  constructor() {
    super('INVALID_REQUEST', 400, 'Invalid ID supplied', { field: 'petId' });
  }
}

export class InvalidPetStatusError extends DomainError {
  constructor() {
    super('INVALID_REQUEST', 400, 'Invalid status value', { field: 'status' });
  }
}
