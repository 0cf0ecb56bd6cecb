/**
 * The run store's statements for database faults: a claim whose answer was lost is given back
 * without counting its attempt, and the write probe writes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/types.js";
import { RunStore } from "../../src/runtime/queue/run-store.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";

describe.each(BACKENDS)("RunStore fault statements on %s", (backend) => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  let store: RunStore;
  beforeAll(async () => {
    owner = await openBackend(backend);
    ({ db, drop } = await freshMigratedSchema(owner));
    store = new RunStore(db);
  });
  afterAll(async () => {
    await drop();
    await owner.close();
  });

  it("releaseLostClaims returns the owner's running runs to the queue with the claim's attempt given back, and nobody else's", async () => {
    const mine = await store.create({ input: { messages: ["a"] } });
    const theirs = await store.create({ input: { messages: ["b"] } });
    const first = await store.claim(mine.run_id, { owner: "slot-a", leaseMs: 60_000 });
    await store.claim(theirs.run_id, { owner: "slot-b", leaseMs: 60_000 });
    expect(first.run.attempt).toBe(1);
    expect(await store.releaseLostClaims("slot-a")).toEqual([mine.run_id]);
    expect(await store.get(mine.run_id)).toMatchObject({ status: "pending", attempt: 0 });
    expect(await store.get(theirs.run_id)).toMatchObject({ status: "running", attempt: 1 });
    // the old claim's epoch is dead: its writes are refused
    expect(await store.heartbeat(mine.run_id, first.epoch, 60_000)).toBe(false);
    // claimed again, it is attempt 1 again
    expect((await store.claim(mine.run_id, { owner: "slot-c", leaseMs: 60_000 })).run.attempt).toBe(1);
    expect(await store.releaseLostClaims("slot-a")).toEqual([]);
  });

  it("probeWrite stores one row per prober, rewritten each time", async () => {
    await store.probeWrite("worker-x:probe");
    await store.probeWrite("worker-x:probe");
    await store.probeWrite("health-y");
    const rows = await db.query<{ prober: string; size: number }>(`SELECT prober, length(payload) AS size FROM "${db.schema}".health_probes ORDER BY prober`);
    expect(rows.rows).toEqual([
      { prober: "health-y", size: 2_000 },
      { prober: "worker-x:probe", size: 2_000 },
    ]);
  });
});
