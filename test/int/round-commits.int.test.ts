/**
 * Commits per model + tool round of a run the runtime executes (issue 23): a step's task writes
 * ride in the next checkpoint's statement and the run's events in a checkpoint or ledger write's
 * transaction, and a step's writes to a delta channel (`messages`), answered at once under the
 * lease, in the checkpoint after them too, so a round (guard, model, guard, tools: four checkpoints,
 * two ledger writes) costs about 6 commits where it cost 12. Counted with the bench's wrapper around the Database, as
 * `npm run bench -- commits` counts them: write statements outside a transaction, and transactions.
 */
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import { tempWorkspace } from "../helpers/agent.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";
import { counting, script, type Counts } from "../../bench/round-commits.js";

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
    const counts: Counts = { writeStatements: 0, transactions: 0, otherStatements: 0 };
    const commits = () => counts.writeStatements + counts.transactions;
    const config = loadConfig({ DEVMIND_WORKSPACE: workspace.dir, DEVMIND_LEASE_MS: "600000", DEVMIND_MAX_MODEL_ROUNDS: "50", DEVMIND_MAX_TOOL_CALLS: "100" });
    const runtime = createRuntime({ db: counting(db, counts), model: new ScriptedChatModel(script(rounds)), config });
    cleanups.push(() => runtime.close());
    const created = await runtime.runs.create({ input: { messages: ["count"] } });
    const before = commits();
    const run = await runtime.runs.execute(created.run_id);
    expect(run.status).toBe("success");
    expect(run.model_rounds).toBe(rounds);
    const seqs: number[] = [];
    for await (const event of runtime.runs.events(created.run_id)) seqs.push(event.seq);
    // every event is stored, in one sequence, the final one last
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
    expect(seqs.length).toBeGreaterThan(rounds * 4);
    return commits() - before;
  }

  // 6 a round on an idle machine (5.75-6.6 in the bench: four checkpoints with their steps' writes,
  // the ledger's two); whether an event batch finds a write to ride in on its turn depends on
  // timing (7.83 over 6 rounds once in CI under load), so the goal is the bound: at most 8;
  // with the model's and the tools' messages stored alone it was 8.1, without group commit 12
  it("costs about 6 commits per model + tool round, at most 8 (12 before group commit)", async () => {
    const short = await commitsOfRun(3);
    const long = await commitsOfRun(15);
    const perRound = (long - short) / 12;
    expect(perRound).toBeLessThanOrEqual(8);
    expect(perRound).toBeGreaterThan(4);
  });
});
