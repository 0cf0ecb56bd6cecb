/**
 * `npm run bench -- graph`: user graphs run by the devmind runtime (queue, lease, fenced
 * checkpoints, stored events) vs the same graphs invoked with the official PostgresSaver alone,
 * on the same PostgreSQL, interleaved in one process: time per step and database commits per step.
 *
 * - `linear20`: 20 nodes in a row, each adding 1 to a counter (20 steps per run);
 * - `loop3`: a 3-node loop that goes round until the counter reaches 100 (100 steps per run).
 */
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { loadConfig } from "../src/config.js";
import { migrate } from "../src/db/migrate.js";
import { openDatabase } from "../src/db/open-database.js";
import { createRuntime } from "../src/runtime/runtime.js";
import { freshSchema } from "./agent-runs.js";
import { benchDatabaseUrl, missingUrlMessage, parseBenchArgs, printableUrl } from "./bench-env.js";
import { dropSchema } from "./footprint.js";
import { counting, xactCommits, type Counts } from "./round-commits.js";
import { fixed, formatTable, median } from "./stats.js";

const USAGE = `usage: npm run bench -- graph [--rounds N]
  --rounds N   runs of each graph on each side (default 3, x5 for linear20); medians are printed
Runs a 20-node linear graph and a 3-node loop of 100 steps through the devmind runtime and through
LangGraph with the official PostgresSaver, on the same PostgreSQL, interleaved.`;

const Counter = Annotation.Root({ count: Annotation<number>({ reducer: (_, next) => next, default: () => 0 }) });

function linear(nodes: number) {
  const graph = new StateGraph(Counter);
  for (let i = 1; i <= nodes; i++) graph.addNode(`n${i}`, (state: { count: number }) => ({ count: state.count + 1 }));
  const builder = graph as unknown as { addEdge(from: string, to: string): unknown };
  builder.addEdge(START, "n1");
  for (let i = 1; i < nodes; i++) builder.addEdge(`n${i}`, `n${i + 1}`);
  builder.addEdge(`n${nodes}`, END);
  return graph;
}

function loop(limit: number) {
  return new StateGraph(Counter)
    .addNode("a", (state) => ({ count: state.count + 1 }))
    .addNode("b", (state) => ({ count: state.count + 1 }))
    .addNode("c", (state) => ({ count: state.count + 1 }))
    .addEdge(START, "a")
    .addEdge("a", "b")
    .addEdge("b", "c")
    .addConditionalEdges("c", (state) => (state.count >= limit ? END : "a"), ["a", END]);
}

interface Workload {
  name: string;
  build: () => ReturnType<typeof linear>;
  steps: number;
  runs: number;
}

interface SideResult {
  msPerStep: number[];
  commitsPerStep: number[];
  writesPerStep: number[];
}

export async function runGraphBench(args: readonly string[]): Promise<number> {
  const parsed = parseBenchArgs(args, {}, USAGE);
  if ("exit" in parsed) return parsed.exit;
  const url = benchDatabaseUrl();
  if (url === undefined) {
    console.error(missingUrlMessage("graph"));
    return 2;
  }
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  const workloads: Workload[] = [
    { name: "linear20", build: () => linear(20), steps: 20, runs: parsed.rounds * 5 },
    { name: "loop3", build: () => loop(100) as unknown as ReturnType<typeof linear>, steps: 100, runs: parsed.rounds },
  ];
  const ourSchema = freshSchema("bench_graph");
  const peerSchema = freshSchema("bench_graph_peer");
  const counts: Counts = { writeStatements: 0, transactions: 0, otherStatements: 0 };
  const raw = await openDatabase({ url, schema: ourSchema });
  const peerPool = new pg.Pool({ connectionString: url });
  const peer = new PostgresSaver(peerPool, undefined, { schema: peerSchema });
  try {
    await migrate(raw);
    await peer.setup();
    const db = counting(raw, counts);
    const graphs = Object.fromEntries(workloads.map((w) => [w.name, w.build()]));
    const runtime = createRuntime({ db, config: loadConfig({ DEVMIND_LEASE_MS: "600000" }), graphs: { agent: false, ...graphs } });
    console.error(`PostgreSQL at ${printableUrl(url)}; devmind runtime (runs.create + runs.execute) vs LangGraph + official PostgresSaver (graph.invoke)`);
    const rows: string[][] = [];
    try {
      for (const workload of workloads) {
        const peerGraph = workload.build().compile({ checkpointer: peer });
        const ours: SideResult = { msPerStep: [], commitsPerStep: [], writesPerStep: [] };
        const theirs: SideResult = { msPerStep: [], commitsPerStep: [], writesPerStep: [] };
        // one warm-up run each, not measured
        await peerGraph.invoke({ count: 0 }, { configurable: { thread_id: `warm-${workload.name}` }, recursionLimit: 1_000 });
        const warm = await runtime.runs.create({ assistantId: workload.name, input: { count: 0 }, config: { recursion_limit: 1_000 } });
        await runtime.runs.execute(warm.run_id);
        for (let i = 0; i < workload.runs; i++) {
          {
            const commits = await xactCommits(admin);
            const started = performance.now();
            await peerGraph.invoke({ count: 0 }, { configurable: { thread_id: `${workload.name}-${i}` }, recursionLimit: 1_000 });
            const ms = performance.now() - started;
            await new Promise((resolve) => setTimeout(resolve, 600)); // the statistics collector settles
            theirs.msPerStep.push(ms / workload.steps);
            theirs.commitsPerStep.push((await xactCommits(admin)) - commits - 1);
          }
          {
            const created = await runtime.runs.create({ assistantId: workload.name, input: { count: 0 }, config: { recursion_limit: 1_000 } });
            const before = { ...counts };
            const commits = await xactCommits(admin);
            const started = performance.now();
            const run = await runtime.runs.execute(created.run_id);
            const ms = performance.now() - started;
            if (run.status !== "success") throw new Error(`graph bench: ${workload.name} ended ${run.status} (${run.error?.message ?? ""})`);
            await new Promise((resolve) => setTimeout(resolve, 600));
            ours.msPerStep.push(ms / workload.steps);
            ours.commitsPerStep.push((await xactCommits(admin)) - commits - 1);
            ours.writesPerStep.push((counts.writeStatements - before.writeStatements + counts.transactions - before.transactions) / workload.steps);
          }
        }
        for (const side of [theirs, ours]) side.commitsPerStep = side.commitsPerStep.map((n) => n / workload.steps);
        const ratio = median(ours.msPerStep) / median(theirs.msPerStep);
        rows.push([
          workload.name,
          `${workload.steps}`,
          `${workload.runs}`,
          fixed(median(theirs.msPerStep), 2),
          fixed(median(ours.msPerStep), 2),
          `${fixed(ratio, 2)}x`,
          fixed(median(theirs.commitsPerStep), 2),
          fixed(median(ours.commitsPerStep), 2),
          fixed(median(ours.writesPerStep), 2),
        ]);
      }
    } finally {
      await runtime.close();
    }
    console.log(
      formatTable(
        ["graph", "steps/run", "runs", "official ms/step", "devmind ms/step", "time ratio", "official commits/step", "devmind commits/step", "devmind write commits/step"],
        rows,
      ),
    );
    console.log("commits/step: pg_stat_database xact_commit per step (every statement outside a transaction is a commit, reads included); write commits: devmind's write statements + transactions");
    return 0;
  } finally {
    await raw.close();
    await peerPool.end();
    await dropSchema((text, values) => admin.query(text, values), ourSchema);
    await dropSchema((text, values) => admin.query(text, values), peerSchema);
    await admin.end();
  }
}
