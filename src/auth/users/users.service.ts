import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { InvalidRequestError } from '../../common/errors/common.errors.js';
import { isUniqueViolation } from '../../database/postgres-errors.js';
import { UserAlreadyExistsError } from '../auth.errors.js';
import { User } from './entities/user.entity.js';
import { hashPassword, verifyPassword } from './password-hasher.js';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MIN_PASSWORD_LENGTH = 10;

@Injectable()
export class UsersService {
  constructor(@InjectRepository(User) private readonly users: Repository<User>) {}

  async create(organizationId: string, email: string, password: string): Promise<User> {
    const normalized = email.trim().toLowerCase();
    if (!EMAIL.test(normalized) || normalized.length > 320) throw new InvalidRequestError('email must be an email address', 'email');
    if (password.length < MIN_PASSWORD_LENGTH) {
      throw new InvalidRequestError(`password must be at least ${MIN_PASSWORD_LENGTH} characters`, 'password');
    }
    try {
      return await this.users.save(this.users.create({ organizationId, email: normalized, passwordHash: await hashPassword(password) }));
    } catch (error) {
      if (isUniqueViolation(error)) throw new UserAlreadyExistsError();
      throw error;
    }
  }

  /** The user for these credentials, or null; the same work is done for unknown emails, so timing tells nothing. */
  async authenticate(email: string, password: string): Promise<User | null> {
    const user = await this.users.findOne({ where: { email: email.trim().toLowerCase() } });
    const valid = await verifyPassword(password, user?.passwordHash ?? DUMMY_HASH);
    return user && valid ? user : null;
  }
}

// A hash of a random string with the current parameters, verified against when the email is unknown.
const DUMMY_HASH = 'scrypt$131072$8$1$c2FsdHNhbHRzYWx0c2FsdA==$0aH8n0mDq9VjYV7Qm1pQpR9r3G7k1nJb2c4d5e6f7g8=';
