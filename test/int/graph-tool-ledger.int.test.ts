/**
 * The graph-facing tool ledger's group commit: a call's successful outcome is staged and commits
 * in the transaction of the run's next checkpoint write (a `CheckpointRider`), or alone within
 * GROUP_COMMIT_DEFAULTS.ledgerRideMs; a call begun again in the same attempt (a retried node)
 * finds its outcome stored, never `started`; `flush` stores what is staged before an attempt ends.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withRider } from "../../src/checkpoint/fence-config.js";
import type { Database, Queryable, Statement } from "../../src/db/types.js";
import { DecisionStore } from "../../src/runtime/interrupts/decision-store.js";
import { GraphToolLedger } from "../../src/runtime/ledger/graph-tool-ledger.js";
import { ToolLedger } from "../../src/runtime/ledger/tool-ledger.js";
import type { Fence } from "../../src/runtime/queue/fence.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";
import { waitUntil } from "../helpers/waits.js";

async function insertRun(db: Database): Promise<{ runId: string; fence: Fence }> {
  const runId = randomUUID();
  await db.query(
    `INSERT INTO "${db.schema}".runs (run_id, thread_id, status, input, lease_owner, lease_epoch) VALUES ($1, $2, 'running', '{"messages": []}', 'worker-test', 1)`,
    [runId, `thread-${runId}`],
  );
  return { runId, fence: { runId, epoch: 1 } };
}

/** `db` counting statements outside transactions and transactions. */
function counting(db: Database, counts: { statements: number; transactions: number }): Database {
  return new Proxy(db, {
    get(target, key, receiver) {
      if (key === "query") return (sql: string | Statement, values?: readonly unknown[]) => ((counts.statements += 1), target.query(sql, values));
      if (key === "transaction") return <T>(fn: (tx: Queryable) => Promise<T>) => ((counts.transactions += 1), target.transaction(fn));
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const call = { toolCallId: "call_1", tool: "add", args: { a: 1, b: 2 }, idempotent: false };
const outcome = { ok: true, result: { ok: true, tool: "add", data: 3 } };

describe.each(BACKENDS)("GraphToolLedger group commit on %s", (backend) => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    owner = await openBackend(backend);
    ({ db, drop } = await freshMigratedSchema(owner));
  });
  afterAll(async () => {
    await drop?.();
    await owner?.close();
  });

  it("commits a staged success with the next checkpoint write, in its transaction", async () => {
    const { runId, fence } = await insertRun(db);
    const counts = { statements: 0, transactions: 0 };
    const probe = counting(db, counts);
    const store = new ToolLedger(probe);
    const ledger = new GraphToolLedger(store, new DecisionStore(db), fence, undefined, undefined, undefined, true);
    expect(await ledger.begin(call)).toEqual({ state: "run" });
    counts.statements = 0;
    await ledger.complete(call, outcome);
    // staged: nothing written yet, the call still counted as pending
    expect(counts.statements).toBe(0);
    expect(ledger.pending).toBe(1);
    // the tool task's writes (stood in for by a statement) take it
    await withRider(probe, ledger, (q) => q.query("SELECT 1"));
    expect(counts).toEqual({ statements: 0, transactions: 1 });
    expect(ledger.pending).toBe(0);
    expect(await store.get(runId, "call_1")).toMatchObject({ status: "succeeded", result: outcome.result });
  });

  it("writes a success no checkpoint write takes alone, at once, and finds it when the call is begun again", async () => {
    const { runId, fence } = await insertRun(db);
    const store = new ToolLedger(db);
    const ledger = new GraphToolLedger(store, new DecisionStore(db), fence, undefined, undefined, undefined, true);
    expect(await ledger.begin(call)).toEqual({ state: "run" });
    await ledger.complete(call, outcome);
    await waitUntil("the staged outcome written alone", async () => (await store.get(runId, "call_1"))?.status === "succeeded", 5_000);
    // begun again right after its outcome was staged (a retried node): the stored result, not `started`
    const again = { ...call, toolCallId: "call_2" };
    expect(await ledger.begin(again)).toEqual({ state: "run" });
    await ledger.complete(again, outcome);
    expect(await ledger.begin(again)).toEqual({ state: "done", ok: true, result: outcome.result });
    const third = { ...call, toolCallId: "call_3" };
    await ledger.begin(third);
    await ledger.complete(third, outcome);
    await ledger.flush();
    expect(await store.get(runId, "call_3")).toMatchObject({ status: "succeeded" });
    expect(ledger.pending).toBe(0);
  });
});
