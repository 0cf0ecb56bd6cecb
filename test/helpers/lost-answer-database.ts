import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate } from "../../src/db/migrate.js";
import { openDatabase } from "../../src/db/open-database.js";
import type { Database } from "../../src/db/types.js";
import { TEST_DATABASE_URL } from "./databases.js";
import { createFaultDatabase } from "./fault-database.js";
import { startPgProxy, type PgProxy } from "./pg-proxy.js";

/** What a lost-commit test runs on. */
export interface LostAnswerDatabase {
  /** The fault proxy in front of it (`loseAnswer` swallows a COMMIT's answer and drops the connection). */
  proxy: PgProxy;
  /** The database opened through the proxy, as a runtime opens it, migrated. */
  db: Database;
  /** A temporary workspace directory (its real path). */
  workspace: string;
}

/**
 * A fault database of its own on the test server (TEST_DATABASE_URL), reached through a fault
 * proxy, opened and migrated, and a temporary workspace; what undoes each goes to `cleanups`
 * (run them in reverse).
 */
export async function lostAnswerDatabase(cleanups: (() => Promise<void> | void)[], workspacePrefix: string): Promise<LostAnswerDatabase> {
  const fault = await createFaultDatabase();
  cleanups.push(() => fault.drop());
  const target = new URL(TEST_DATABASE_URL as string);
  const proxy = await startPgProxy({ host: target.hostname, port: Number(target.port || 5432) });
  cleanups.push(() => proxy.close());
  const db = await openDatabase({ url: proxy.urlFor(fault.url), schema: "devmind", maxConnections: 4, connectionTimeoutMs: 2_000 });
  cleanups.push(() => db.close());
  await migrate(db);
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), workspacePrefix)));
  cleanups.push(() => rmSync(workspace, { recursive: true, force: true }));
  return { proxy, db, workspace };
}
