/** The local services the tests use (see README: PostgreSQL and Redis on their standard ports). */
export const TEST_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432';
export const TEST_REDIS_URL = 'redis://127.0.0.1:6379';
