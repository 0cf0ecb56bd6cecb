import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/open-database.js";
import { withCommit, type Database } from "../../src/db/types.js";
import { DatabaseError } from "../../src/errors.js";
import { BACKENDS, TEST_DATABASE_URL, dropSchema, describeWithPostgres, freshSchemaName, openBackend } from "../helpers/databases.js";
import { startPgProxy, type PgProxy } from "../helpers/pg-proxy.js";

/**
 * A transaction's statements that do not wait for each other's results go to PostgreSQL together
 * (pg's pipeline mode): BEGIN with the first, COMMIT with the one sent by `withCommit(tx)`. These
 * tests hold the semantics on both engines (all or nothing, order, the failing statement's own
 * error) and count the round trips on PostgreSQL through a proxy.
 */

const opened: Database[] = [];
afterEach(async () => {
  for (const db of opened.splice(0)) await db.close();
});

async function tableIn(db: Database, schema: string): Promise<string> {
  await db.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await db.query(`CREATE TABLE "${schema}".items (id integer PRIMARY KEY, label text NOT NULL)`);
  return `"${schema}".items`;
}

describe.each(BACKENDS)("transactions whose statements go together on %s", (backend) => {
  it("commits statements sent together and the last sent with COMMIT, answering each in order", async () => {
    const schema = freshSchemaName();
    const db = await openBackend(backend, schema);
    opened.push(db);
    const items = await tableIn(db, schema);
    const answers = await db.transaction(async (tx) => {
      const first = tx.query<{ id: number }>(`INSERT INTO ${items} VALUES ($1, $2) RETURNING id`, [1, "a"]);
      const second = tx.query<{ id: number }>(`INSERT INTO ${items} VALUES ($1, $2) RETURNING id`, [2, "b"]);
      const last = withCommit(tx).query<{ n: number }>(`SELECT count(*)::int AS n FROM ${items}`);
      return (await Promise.all([first, second, last])).map((result) => result.rows[0]);
    });
    expect(answers).toEqual([{ id: 1 }, { id: 2 }, { n: 2 }]);
    expect((await db.query<{ label: string }>(`SELECT label FROM ${items} ORDER BY id`)).rows.map((row) => row.label)).toEqual(["a", "b"]);
    await dropSchema(db, schema);
  });

  it("rolls everything back when the statement sent with COMMIT fails, with that statement's error", async () => {
    const schema = freshSchemaName();
    const db = await openBackend(backend, schema);
    opened.push(db);
    const items = await tableIn(db, schema);
    await db.query(`INSERT INTO ${items} VALUES (1, 'kept')`);
    const failure = await db
      .transaction(async (tx) => {
        await tx.query(`INSERT INTO ${items} VALUES ($1, $2)`, [2, "gone"]);
        await withCommit(tx).query(`INSERT INTO ${items} VALUES ($1, $2)`, [1, "duplicate"]);
        return "committed";
      })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect((failure as { code?: string } | null)?.code ?? String((failure as { cause?: { code?: string } }).cause?.code)).toMatch(/23505/);
    expect((await db.query<{ id: number; label: string }>(`SELECT id, label FROM ${items} ORDER BY id`)).rows).toEqual([{ id: 1, label: "kept" }]);
    // the connection is fit for the next transaction
    await db.transaction(async (tx) => withCommit(tx).query(`INSERT INTO ${items} VALUES (3, 'next')`));
    expect((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${items}`)).rows[0]?.n).toBe(2);
    await dropSchema(db, schema);
  });

  it("rolls back statements sent together when one of them fails, whichever comes first", async () => {
    const schema = freshSchemaName();
    const db = await openBackend(backend, schema);
    opened.push(db);
    const items = await tableIn(db, schema);
    await db.query(`INSERT INTO ${items} VALUES (1, 'kept')`);
    const settled = await db
      .transaction(async (tx) => {
        const results = await Promise.allSettled([
          tx.query(`INSERT INTO ${items} VALUES ($1, $2)`, [1, "duplicate"]),
          withCommit(tx).query(`INSERT INTO ${items} VALUES ($1, $2)`, [5, "after the failure"]),
        ]);
        return results.map((result) => result.status);
      })
      .then(
        (statuses) => ({ statuses }),
        (error: unknown) => ({ error }),
      );
    expect("error" in settled).toBe(true);
    expect((await db.query<{ id: number }>(`SELECT id FROM ${items} ORDER BY id`)).rows).toEqual([{ id: 1 }]);
    await dropSchema(db, schema);
  });
});

describeWithPostgres("pipelined transactions on PostgreSQL: round trips and refusals", () => {
  let proxy: PgProxy;
  let db: Database;
  let schema: string;
  let items: string;

  beforeAll(async () => {
    const target = new URL(TEST_DATABASE_URL as string);
    proxy = await startPgProxy({ host: target.hostname, port: Number(target.port || 5432) });
    schema = freshSchemaName();
    db = await openDatabase({ url: proxy.urlFor(TEST_DATABASE_URL as string), schema });
    items = await tableIn(db, schema);
  });

  afterAll(async () => {
    await dropSchema(db, schema);
    await db.close();
    await proxy.close();
  });

  /** Client-to-server sends (round trips) `work` costs; the pool's connection is opened first. */
  async function roundTrips(work: () => Promise<unknown>): Promise<number> {
    await db.query("SELECT 1");
    const before = proxy.chunksToServer;
    await work();
    return proxy.chunksToServer - before;
  }

  it("sends BEGIN, statements sent together, and COMMIT with the last in one round trip", async () => {
    const trips = await roundTrips(() =>
      db.transaction(async (tx) => {
        await Promise.all([tx.query(`INSERT INTO ${items} VALUES (10, 'a')`), tx.query(`INSERT INTO ${items} VALUES (11, 'b')`), withCommit(tx).query(`INSERT INTO ${items} VALUES (12, 'c')`)]);
      }),
    );
    expect(trips).toBe(1);
    expect((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${items} WHERE id BETWEEN 10 AND 12`)).rows[0]?.n).toBe(3);
  });

  it("costs one round trip for BEGIN with the first statement and one for the last with COMMIT when the second waits for the first", async () => {
    const trips = await roundTrips(() =>
      db.transaction(async (tx) => {
        const first = await tx.query<{ id: number }>(`INSERT INTO ${items} VALUES (20, 'a') RETURNING id`);
        await withCommit(tx).query(`INSERT INTO ${items} VALUES ($1, 'b')`, [(first.rows[0]?.id ?? 0) + 1]);
      }),
    );
    expect(trips).toBe(2);
    // without withCommit, COMMIT is a round trip of its own (BEGIN still rides with the statement)
    const plain = await roundTrips(() => db.transaction(async (tx) => void (await tx.query(`INSERT INTO ${items} VALUES (30, 'c')`))));
    expect(plain).toBe(2);
  });

  it("refuses a statement sent after COMMIT, runs nothing of it, and keeps what committed", async () => {
    let late: unknown = null;
    await db.transaction(async (tx) => {
      await withCommit(tx).query(`INSERT INTO ${items} VALUES (40, 'committed')`);
      late = await tx.query(`INSERT INTO ${items} VALUES (41, 'late')`).then(
        () => null,
        (error: unknown) => error,
      );
    });
    expect(late).toBeInstanceOf(DatabaseError);
    expect(String((late as Error).message)).toMatch(/after its transaction's COMMIT/);
    expect((await db.query<{ id: number }>(`SELECT id FROM ${items} WHERE id IN (40, 41) ORDER BY id`)).rows).toEqual([{ id: 40 }]);
  });

  it("rolls back on an error the function throws before anything went with COMMIT", async () => {
    await expect(
      db.transaction(async (tx) => {
        await tx.query(`INSERT INTO ${items} VALUES (50, 'rolled back')`);
        throw new Error("the caller changed its mind");
      }),
    ).rejects.toThrow("the caller changed its mind");
    expect((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${items} WHERE id = 50`)).rows[0]?.n).toBe(0);
  });
});
