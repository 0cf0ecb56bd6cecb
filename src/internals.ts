/**
 * `devmind/internals`: pieces the library is built from, for tools and tests that work below the
 * library API (src/index.ts). Not covered by CONTRACT section 9: names and shapes here may change
 * between versions.
 *
 * - `withSchema(db, name)`: a view of the same connections on another schema (a test's or a
 *   tenant's own schema without a second pool).
 * - `readMigrationFiles()`: the migrations `migrate` applies, with their checksums.
 * - `fenceConfigurable(configurable, fence)`: puts a run's lease fence in a checkpoint config so
 *   `PostgresCheckpointSaver` writes only while the lease holds (what the runtime does per run).
 */
export { withSchema } from "./db/schema-view.js";
export { readMigrationFiles, type MigrationFile } from "./db/migration-files.js";
export { fenceConfigurable, type CheckpointFence } from "./checkpoint/fence-config.js";
