import { Global, Module } from '@nestjs/common';
import { SecretBox } from './secret-box.js';

/** Encryption of secrets at rest, available to every module. */
@Global()
@Module({ providers: [SecretBox], exports: [SecretBox] })
export class CryptoModule {}
