// The data source the TypeORM CLI loads: `npm run typeorm -- migration:show`.
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from './data-source.options.js';

export default new DataSource(dataSourceOptions(AppConfig.fromEnv()));
