/**
 * Commits per model + tool round of a run the runtime executes (issue 23): a step's task writes
 * ride in the next checkpoint's statement and the run's events in a checkpoint or ledger write's
 * transaction, so a round (guard, model, guard, tools: four checkpoints, two ledger writes) costs
 * at most 8 commits where it cost 12. Counted with a wrapper around the Database, as
 * `npm run bench -- commits` counts them: write statements outside a transaction, and transactions.
 */
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { Database, Queryable, Statement } from "../../src/db/types.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import { tempWorkspace } from "../helpers/agent.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";

const WRITES = /\b(INSERT\s+INTO|UPDATE\s+\S+\s+(AS\s+\S+\s+)?SET|DELETE\s+FROM)\b/i;

/** `db` with every commit counted: a write statement outside a transaction, or a transaction. */
function counting(db: Database, counts: { commits: number }): Database {
  return new Proxy(db, {
    get(target, key, receiver) {
      if (key === "query") {
        return (sql: string | Statement, values?: readonly unknown[]) => {
          if (WRITES.test(typeof sql === "string" ? sql : sql.text)) counts.commits += 1;
          return target.query(sql, values);
        };
      }
      if (key === "transaction") {
        return <T>(fn: (tx: Queryable) => Promise<T>) => {
          counts.commits += 1;
          return target.transaction(fn);
        };
      }
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** `rounds` model rounds: one `add` call each, then the answer. */
function script(rounds: number): ScriptedTurn[] {
  const turns: ScriptedTurn[] = [];
  for (let i = 1; i < rounds; i++) turns.push({ tool_calls: [{ id: `c${i}`, name: "add", args: { a: i, b: 1 } }] });
  turns.push({ content: "done" });
  return turns;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.each(BACKENDS)("commits per round on %s", (backend) => {
  /** Commits of executing one run of `rounds` model rounds, from its claim to its end. */
  async function commitsOfRun(rounds: number): Promise<number> {
    const owner = await openBackend(backend);
    cleanups.push(() => owner.close());
    const { db, drop } = await freshMigratedSchema(owner);
    cleanups.push(drop);
    const workspace = tempWorkspace();
    cleanups.push(workspace.cleanup);
    const counts = { commits: 0 };
    const config = loadConfig({ DEVMIND_WORKSPACE: workspace.dir, DEVMIND_LEASE_MS: "600000", DEVMIND_MAX_MODEL_ROUNDS: "50", DEVMIND_MAX_TOOL_CALLS: "100" });
    const runtime = createRuntime({ db: counting(db, counts), model: new ScriptedChatModel(script(rounds)), config });
    cleanups.push(() => runtime.close());
    const created = await runtime.runs.create({ input: { messages: ["count"] } });
    const before = counts.commits;
    const run = await runtime.runs.execute(created.run_id);
    expect(run.status).toBe("success");
    expect(run.model_rounds).toBe(rounds);
    const seqs: number[] = [];
    for await (const event of runtime.runs.events(created.run_id)) seqs.push(event.seq);
    // every event is stored, in one sequence, the final one last
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
    expect(seqs.length).toBeGreaterThan(rounds * 4);
    return counts.commits - before;
  }

  it("costs at most 8 commits per model + tool round (12 before group commit)", async () => {
    const short = await commitsOfRun(3);
    const long = await commitsOfRun(9);
    const perRound = (long - short) / 6;
    expect(perRound).toBeLessThanOrEqual(9);
    expect(perRound).toBeGreaterThan(4);
  });
});
