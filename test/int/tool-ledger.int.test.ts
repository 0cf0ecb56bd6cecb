import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/types.js";
import { LeaseLostError, RunConflictError } from "../../src/errors.js";
import { DecisionStore } from "../../src/runtime/interrupts/decision-store.js";
import { argsDigest } from "../../src/runtime/interrupts/digest.js";
import type { Fence } from "../../src/runtime/queue/fence.js";
import { ToolLedger } from "../../src/runtime/ledger/tool-ledger.js";
import { BACKENDS, freshMigratedSchema, itOn, openBackend } from "../helpers/databases.js";
import { rejection } from "../helpers/assertions.js";
import { waitForBlockedStatement } from "../helpers/waits.js";

/** Inserts a run row directly (columns per migration 0002): running with a lease at `epoch`, or another status. */
async function insertRun(db: Database, options: { epoch?: number; status?: "running" | "interrupted" } = {}): Promise<{ runId: string; fence: Fence }> {
  const runId = randomUUID();
  const epoch = options.epoch ?? 1;
  const status = options.status ?? "running";
  await db.query(
    `INSERT INTO "${db.schema}".runs (run_id, thread_id, status, input, lease_owner, lease_epoch)
     VALUES ($1, $2, $3, '{"messages": []}', $4, $5)`,
    [runId, `thread-${runId}`, status, status === "running" ? "worker-test" : null, epoch],
  );
  return { runId, fence: { runId, epoch } };
}

async function bumpEpoch(db: Database, runId: string): Promise<void> {
  await db.query(`UPDATE "${db.schema}".runs SET lease_epoch = lease_epoch + 1 WHERE run_id = $1`, [runId]);
}


const digest = argsDigest({ path: "notes.txt", content: "hello\n" });

describe.each(BACKENDS)("ToolLedger on %s", (backend) => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  let ledger: ToolLedger;
  beforeAll(async () => {
    owner = await openBackend(backend);
    ({ db, drop } = await freshMigratedSchema(owner));
    ledger = new ToolLedger(db);
  });
  afterAll(async () => {
    await drop?.();
    await owner?.close();
  });

  it("goes new -> started (attempts counted on re-entry) -> succeeded, then returns the stored result", async () => {
    const { runId, fence } = await insertRun(db);
    const call = { toolCallId: "call_1", tool: "append_file", argsDigest: digest };
    expect(await ledger.begin(fence, call)).toEqual({ state: "new" });
    expect(await ledger.get(runId, "call_1")).toMatchObject({ run_id: runId, status: "started", attempts: 1, lease_epoch: 1, finished_at: null, result: null });
    // begun under this very epoch: the epoch says so (a begin whose answer was lost, unless the caller ran it)
    expect(await ledger.begin(fence, call)).toEqual({ state: "started", attempts: 2, epoch: fence.epoch });
    expect(await ledger.begin(fence, call)).toEqual({ state: "started", attempts: 3, epoch: fence.epoch });
    const result = { ok: true, tool: "append_file", data: { bytes: 6 }, error: null, truncated: false };
    await ledger.complete(fence, "call_1", { ok: true, result });
    expect(await ledger.begin(fence, call)).toEqual({ state: "succeeded", result });
    expect(await ledger.begin(fence, call)).toEqual({ state: "succeeded", result });
    const entry = await ledger.get(runId, "call_1");
    expect(entry).toMatchObject({ status: "succeeded", attempts: 3, args_digest: digest, tool: "append_file", result });
    expect(entry?.finished_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(await ledger.get(runId, "call_unknown")).toBeNull();
  });

  it("stores a failure and returns it on re-entry, without running again", async () => {
    const { fence } = await insertRun(db);
    const call = { toolCallId: "call_f", tool: "run_command", argsDigest: digest };
    expect(await ledger.begin(fence, call)).toEqual({ state: "new" });
    const result = { ok: false, tool: "run_command", data: null, error: { code: "TOOL_TIMEOUT", message: "timed out" } };
    await ledger.complete(fence, "call_f", { ok: false, result });
    expect(await ledger.begin(fence, call)).toEqual({ state: "failed", result });
  });

  it("release forgets a started or failed call (it begins as new again) but never a succeeded one; fenced", async () => {
    const { runId, fence } = await insertRun(db);
    const started = { toolCallId: "call_r1", tool: "ask", argsDigest: digest };
    expect(await ledger.begin(fence, started)).toEqual({ state: "new" });
    expect(await ledger.release(fence, "call_r1")).toBe(true);
    expect(await ledger.get(runId, "call_r1")).toBeNull();
    expect(await ledger.begin(fence, started)).toEqual({ state: "new" });

    const failed = { toolCallId: "call_r2", tool: "flaky", argsDigest: digest };
    await ledger.begin(fence, failed);
    await ledger.complete(fence, "call_r2", { ok: false, result: { error: "once" } });
    expect(await ledger.release(fence, "call_r2")).toBe(true);
    expect(await ledger.begin(fence, failed)).toEqual({ state: "new" });

    const done = { toolCallId: "call_r3", tool: "append_file", argsDigest: digest };
    await ledger.begin(fence, done);
    await ledger.complete(fence, "call_r3", { ok: true, result: "kept" });
    expect(await ledger.release(fence, "call_r3")).toBe(false);
    expect(await ledger.begin(fence, done)).toEqual({ state: "succeeded", result: "kept" });

    await bumpEpoch(db, runId);
    expect(await rejection(ledger.release(fence, "call_r1"))).toBeInstanceOf(LeaseLostError);
    expect(await ledger.get(runId, "call_r1")).toMatchObject({ status: "started" });
  });

  it("lets a worker that took the lease over re-enter a started call, and refuses the old one", async () => {
    const { runId, fence } = await insertRun(db, { epoch: 7 });
    const call = { toolCallId: "call_t", tool: "append_file", argsDigest: digest };
    expect(await ledger.begin(fence, call)).toEqual({ state: "new" });
    await bumpEpoch(db, runId);
    const stale = await rejection(ledger.complete(fence, "call_t", { ok: true, result: "late" }));
    expect(stale).toBeInstanceOf(LeaseLostError);
    expect(stale.details).toEqual({ runId, epoch: 7 });
    expect((await rejection(ledger.begin(fence, call))).code).toBe("LEASE_LOST");
    expect(await ledger.get(runId, "call_t")).toMatchObject({ status: "started", attempts: 1, lease_epoch: 7, result: null });
    const current = { runId, epoch: 8 };
    // begun under the old epoch: the new holder's begin says so (it never ran it: TOOL_OUTCOME_UNKNOWN unless idempotent)
    expect(await ledger.begin(current, call)).toEqual({ state: "started", attempts: 2, epoch: 7 });
    expect(await ledger.get(runId, "call_t")).toMatchObject({ lease_epoch: 8 });
    await ledger.complete(current, "call_t", { ok: true, result: "done" });
    expect(await ledger.begin(current, call)).toEqual({ state: "succeeded", result: "done" });
  });

  it("writes nothing for a fence that does not hold: new call, wrong epoch, or a run no longer running", async () => {
    const { runId, fence } = await insertRun(db, { epoch: 3 });
    const call = { toolCallId: "call_x", tool: "add", argsDigest: digest };
    expect((await rejection(ledger.begin({ runId, epoch: 2 }, call))).code).toBe("LEASE_LOST");
    expect((await rejection(ledger.begin({ runId: randomUUID(), epoch: 3 }, call))).code).toBe("LEASE_LOST");
    await db.query(`UPDATE "${db.schema}".runs SET status = 'interrupted', lease_owner = NULL WHERE run_id = $1`, [runId]);
    expect((await rejection(ledger.begin(fence, call))).code).toBe("LEASE_LOST");
    expect(await ledger.get(runId, "call_x")).toBeNull();
  });

  it("refuses a call re-entered with other arguments, completing twice, or completing what never began", async () => {
    const { runId, fence } = await insertRun(db);
    const call = { toolCallId: "call_d", tool: "append_file", argsDigest: digest };
    await ledger.begin(fence, call);
    const other = await rejection(ledger.begin(fence, { ...call, argsDigest: argsDigest({ path: "other.txt" }) }));
    expect(other).toBeInstanceOf(RunConflictError);
    expect(other.message).toContain("other arguments");
    expect(await ledger.get(runId, "call_d")).toMatchObject({ attempts: 1, args_digest: digest });
    expect((await rejection(ledger.complete(fence, "call_never", { ok: true, result: null }))).message).toContain("never begun");
    await ledger.complete(fence, "call_d", { ok: true, result: 1 });
    expect((await rejection(ledger.complete(fence, "call_d", { ok: false, result: 2 }))).message).toContain("already succeeded");
    expect((await ledger.get(runId, "call_d"))?.result).toBe(1);
    expect((await rejection(ledger.begin(fence, { ...call, argsDigest: "nope" }))).code).toBe("RUN_INPUT_INVALID");
    expect((await rejection(ledger.begin({ runId, epoch: -1 }, call))).code).toBe("RUN_INPUT_INVALID");
  });

  itOn(backend, "postgres")("makes a fenced write racing a takeover wait for it, then refuses it", async () => {
    const { runId, fence } = await insertRun(db);
    const call = { toolCallId: "call_race", tool: "append_file", argsDigest: digest };
    let settled = false;
    let outcome: Promise<unknown> = Promise.resolve();
    await db.transaction(async (tx) => {
      await tx.query(`UPDATE "${db.schema}".runs SET lease_epoch = lease_epoch + 1, lease_owner = 'worker-new' WHERE run_id = $1`, [runId]);
      outcome = ledger.begin(fence, call).finally(() => (settled = true));
      outcome.catch(() => undefined);
      // the race happened: the takeover is not committed yet and the fenced statement waits on the run row's lock
      expect(await waitForBlockedStatement(owner, db.schema, 20_000)).toBeGreaterThan(0);
      expect(settled).toBe(false);
    });
    expect((await rejection(outcome)).code).toBe("LEASE_LOST");
    expect(await ledger.get(runId, "call_race")).toBeNull();
  });
});

describe.each(BACKENDS)("DecisionStore on %s", (backend) => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  let decisions: DecisionStore;
  beforeAll(async () => {
    owner = await openBackend(backend);
    ({ db, drop } = await freshMigratedSchema(owner));
    decisions = new DecisionStore(db);
  });
  afterAll(async () => {
    await drop?.();
    await owner?.close();
  });

  it("records approve / edit / reject with who, why and the digest of the arguments that will run", async () => {
    const { runId } = await insertRun(db, { status: "interrupted" });
    const stored = await decisions.record(runId, [
      { toolCallId: "c1", tool: "write_file", decision: "approve", args: { path: "a.txt", content: "x" }, principal: "alice" },
      { toolCallId: "c2", tool: "write_file", decision: "edit", args: { path: "b.txt", content: "edited" }, principal: "alice", reason: "safer path" },
      { toolCallId: "c3", tool: "run_command", decision: "reject", principal: "bob", reason: "no shell" },
    ]);
    expect(stored.map((row) => [row.tool_call_id, row.decision, row.principal, row.reason])).toEqual([
      ["c1", "approve", "alice", null],
      ["c2", "edit", "alice", "safer path"],
      ["c3", "reject", "bob", "no shell"],
    ]);
    expect(stored[0]).toMatchObject({ run_id: runId, tool: "write_file", args: { path: "a.txt", content: "x" }, args_digest: argsDigest({ content: "x", path: "a.txt" }) });
    expect(stored[1]?.args_digest).toBe(argsDigest({ path: "b.txt", content: "edited" }));
    expect(stored[2]).toMatchObject({ args: null, args_digest: null });
    expect(new Date(stored[0]!.decided_at).toISOString()).toBe(stored[0]!.decided_at);
    expect(await decisions.list(runId)).toEqual(expect.arrayContaining(stored));
    expect((await decisions.list(runId)).length).toBe(3);
    // key order of the arguments does not matter
    expect(await decisions.approvedDigest(runId, "c1")).toBe(argsDigest({ content: "x", path: "a.txt" }));
    expect(await decisions.approvedDigest(runId, "c2")).toBe(argsDigest({ content: "edited", path: "b.txt" }));
    expect(await decisions.approvedDigest(runId, "c3")).toBeNull();
    expect(await decisions.approvedDigest(runId, "c4")).toBeNull();
  });

  it("refuses a second decision for a call, naming who decided and when, and stores none of the batch", async () => {
    const { runId } = await insertRun(db, { status: "interrupted" });
    const [first] = await decisions.record(runId, [{ toolCallId: "c1", tool: "write_file", decision: "approve", args: { path: "a" }, principal: "alice" }]);
    const conflict = await rejection(
      decisions.record(runId, [
        { toolCallId: "c2", tool: "write_file", decision: "approve", args: { path: "b" }, principal: "bob" },
        { toolCallId: "c1", tool: "write_file", decision: "reject", principal: "bob" },
      ]),
    );
    expect(conflict).toBeInstanceOf(RunConflictError);
    expect(conflict.code).toBe("RUN_CONFLICT");
    expect(conflict.message).toBe(`tool call c1 was already decided by alice at ${first!.decided_at}`);
    expect(conflict.details).toMatchObject({ toolCallId: "c1", principal: "alice", decision: "approve" });
    expect((await decisions.list(runId)).map((row) => row.tool_call_id)).toEqual(["c1"]);
    expect(await decisions.approvedDigest(runId, "c1")).toBe(argsDigest({ path: "a" }));
  });

  it("lets only one of two racing deciders win", async () => {
    const { runId } = await insertRun(db, { status: "interrupted" });
    const results = await Promise.allSettled(
      ["alice", "bob"].map((principal) => decisions.record(runId, [{ toolCallId: "c1", tool: "add", decision: "approve", args: { a: 1, b: 2 }, principal }])),
    );
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
    const failed = results.find((result) => result.status === "rejected") as PromiseRejectedResult;
    expect(failed.reason).toBeInstanceOf(RunConflictError);
    expect(await decisions.list(runId)).toHaveLength(1);
  });

  it("refuses malformed decisions, duplicates in one batch and unknown runs, storing nothing", async () => {
    const { runId } = await insertRun(db, { status: "interrupted" });
    const good = { toolCallId: "c1", tool: "add", decision: "approve" as const, args: { a: 1 }, principal: "alice" };
    const malformed: unknown[] = [
      [],
      [{ ...good, args: undefined }],
      [{ ...good, decision: "maybe" }],
      [{ ...good, principal: " " }],
      [{ ...good, toolCallId: "" }],
      [{ ...good, args: [1, 2] }],
    ];
    for (const batch of malformed) expect((await rejection(decisions.record(runId, batch as never))).code).toBe("RUN_INPUT_INVALID");
    const twice = await rejection(decisions.record(runId, [good, { ...good, decision: "reject" }]));
    expect(twice).toBeInstanceOf(RunConflictError);
    expect(twice.message).toContain("twice");
    expect(await decisions.list(runId)).toEqual([]);
    expect((await rejection(decisions.record(randomUUID(), [good]))).code).toBe("RUN_NOT_FOUND");
    expect((await rejection(decisions.record("nope", [good]))).code).toBe("RUN_NOT_FOUND");
  });
});
