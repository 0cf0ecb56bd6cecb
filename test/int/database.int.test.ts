import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { migrate } from "../../src/db/migrate.js";
import { openDatabase } from "../../src/db/open-database.js";
import { withSchema } from "../../src/db/schema-view.js";
import type { Database } from "../../src/db/types.js";
import { BACKENDS, TEST_DATABASE_URL, dropSchema, freshSchemaName, openBackend } from "../helpers/databases.js";
import { rejection } from "../helpers/assertions.js";
import { seedDataDir } from "../helpers/pglite-template.js";


const dirs: string[] = [];
const opened: Database[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "devmind-db-"));
  dirs.push(dir);
  return dir;
}
async function track(db: Promise<Database>): Promise<Database> {
  const value = await db;
  opened.push(value);
  return value;
}

afterEach(async () => {
  for (const db of opened.splice(0)) await db.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("openDatabase: bad input", () => {
  it.each([
    ["mysql://root@localhost/db", "must start with postgres://"],
    ["postgres://", "has no host"],
    ["not a url", "not a valid URL"],
  ])("refuses DATABASE_URL %s", async (url, text) => {
    const error = await rejection(openDatabase({ url }));
    expect(error.code).toBe("DATABASE_URL_INVALID");
    expect(error.message).toContain(text);
  });

  it("reports an unreachable server naming the address, without the password", async () => {
    const error = await rejection(openDatabase({ url: "postgres://devmind:s3cret-pass@127.0.0.1:1/nowhere" }));
    expect(error.code).toBe("DATABASE_UNREACHABLE");
    expect(error.message).toContain("127.0.0.1:1");
    expect(error.message).not.toContain("s3cret-pass");
    expect(JSON.stringify(error.toJSON())).not.toContain("s3cret-pass");
  });

  it("refuses a bad schema name before touching the disk", async () => {
    const dataDir = join(tempDir(), "never-created");
    const error = await rejection(openDatabase({ dataDir, schema: "Robert'); DROP TABLE x;--" }));
    expect(error.code).toBe("SCHEMA_NAME_INVALID");
    expect(existsSync(dataDir)).toBe(false);
  });

  it.runIf(TEST_DATABASE_URL !== undefined)("reports a database that does not exist", async () => {
    const url = new URL(TEST_DATABASE_URL as string);
    url.pathname = "/devmind_no_such_database";
    const error = await rejection(openDatabase({ url: url.toString() }));
    expect(error.code).toBe("DATABASE_UNREACHABLE");
    expect(error.message).toContain("devmind_no_such_database");
  });
});

describe("embedded PGlite data directory", () => {
  it("persists across close and reopen, and holds a lock file only while open", async () => {
    const dataDir = tempDir();
    const lockFile = join(dataDir, "pgdata.lock");
    const first = await openDatabase({ dataDir, schema: "persist" });
    expect(first.kind).toBe("pglite");
    expect(first.location).toBe(join(dataDir, "pgdata"));
    expect(JSON.parse(readFileSync(lockFile, "utf8")).pid).toBe(process.pid);
    await migrate(first);
    await first.query(`INSERT INTO persist.checkpoints (thread_id, checkpoint_id, checkpoint) VALUES ($1, $2, $3::jsonb)`, ["t", "c", "{}"]);
    await first.close();
    expect(existsSync(lockFile)).toBe(false);

    const second = await track(openDatabase({ dataDir, schema: "persist" }));
    const rows = await second.query<{ thread_id: string }>("SELECT thread_id FROM persist.checkpoints");
    expect(rows.rows).toEqual([{ thread_id: "t" }]);
  }, 120_000);

  it("refuses a second opener of the same directory with DATABASE_LOCKED naming the holder", async () => {
    const dataDir = seedDataDir(tempDir());
    await track(openDatabase({ dataDir }));
    const error = await rejection(openDatabase({ dataDir }));
    expect(error.code).toBe("DATABASE_LOCKED");
    expect(error.message).toContain(`process ${process.pid}`);
    expect(error.message).toContain("DATABASE_URL");
  });

  it("takes over a lock left by a dead process or a torn write", async () => {
    const dataDir = seedDataDir(tempDir());
    const lockFile = join(dataDir, "pgdata.lock");
    writeFileSync(lockFile, JSON.stringify({ pid: 2 ** 22 + 12345, host: (await import("node:os")).hostname(), token: "old", startedAt: "x" }));
    const db = await track(openDatabase({ dataDir }));
    expect(JSON.parse(readFileSync(lockFile, "utf8")).pid).toBe(process.pid);
    await db.close();
    writeFileSync(lockFile, '{"pid": 12');
    await track(openDatabase({ dataDir }));
    expect(JSON.parse(readFileSync(lockFile, "utf8")).pid).toBe(process.pid);
  });
});

describe.each(BACKENDS)("database seam on %s", (backend) => {
  it("rolls a failed transaction back entirely", async () => {
    const schema = freshSchemaName();
    const db = await track(openBackend(backend, schema));
    await migrate(db);
    await expect(
      db.transaction(async (tx) => {
        await tx.query(`INSERT INTO "${schema}".checkpoints (thread_id, checkpoint_id, checkpoint) VALUES ('t', 'c', '{}')`);
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    const count = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".checkpoints`);
    expect(count.rows[0]?.n).toBe(0);
    const committed = await db.transaction(async (tx) => {
      await tx.query(`INSERT INTO "${schema}".checkpoints (thread_id, checkpoint_id, checkpoint) VALUES ('t', 'c', '{}')`);
      return "done";
    });
    expect(committed).toBe("done");
    expect((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".checkpoints`)).rows[0]?.n).toBe(1);
    await dropSchema(db, schema);
  });

  it("shares connections between schema views; closing a view leaves the owner open", async () => {
    const owner = await track(openBackend(backend));
    const view = withSchema(owner, freshSchemaName());
    expect(view.kind).toBe(owner.kind);
    await migrate(view);
    await view.close();
    expect((await owner.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    await dropSchema(owner, view.schema);
    expect(() => withSchema(owner, "Bad Name")).toThrow(/invalid schema name/);
  });
});
