/**
 * devmind — a durable agent runtime for TypeScript. The named exports below are the library API
 * (CONTRACT section 9); everything else is internal.
 */
export { loadConfig, type DevmindConfig } from "./config.js";
export { DevmindError, ConfigError, DatabaseError, MigrationError, CheckpointError, hasErrorCode, type DevmindErrorCode, type ErrorKind } from "./errors.js";
export { openDatabase, type OpenDatabaseOptions } from "./db/open-database.js";
export { withSchema } from "./db/schema-view.js";
export type { Database, Queryable, QueryResult, Statement } from "./db/types.js";
export { migrate, migrationStatus, type MigrateResult, type MigrationState, type MigrateOptions } from "./db/migrate.js";
export { readMigrationFiles, type MigrationFile } from "./db/migration-files.js";
export { PostgresCheckpointSaver, type PostgresCheckpointSaverOptions } from "./checkpoint/postgres-saver.js";
