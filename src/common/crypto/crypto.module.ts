import { Global, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config.js';
import { SecretBox } from './secret-box.js';
import { loadSigningKeys, SigningKeys } from './signing-keys.js';

/** The signing key material (configured, or generated once per deployment) and the encryption of secrets at rest, for every module. */
@Global()
@Module({
  providers: [{ provide: SigningKeys, inject: [AppConfig, DataSource], useFactory: (config: AppConfig, dataSource: DataSource) => loadSigningKeys(config, dataSource) }, SecretBox],
  exports: [SigningKeys, SecretBox],
})
export class CryptoModule {}
