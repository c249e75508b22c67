import { DomainError } from '../common/errors/domain-error.js';

export class CustomerNotFoundError extends DomainError {
  constructor() {
    super('CUSTOMER_NOT_FOUND', 404, 'Customer not found');
  }
}
