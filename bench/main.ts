/**
 * `npm run bench -- <name> [options]`: runs one benchmark. Each entry loads its module only when
 * chosen, so a bench's dependencies never slow down or break another.
 */
interface Bench {
  /** One line for the list printed on an unknown name. */
  description: string;
  /** Runs the bench with the remaining arguments and resolves to the exit code. */
  run: (args: readonly string[]) => Promise<number>;
}

/** Every benchmark by name; add new ones here. */
const BENCHES: Record<string, Bench> = {
  checkpointer: {
    description: "our PostgresCheckpointSaver vs the official PostgresSaver on PostgreSQL, then on PGlite",
    run: async (args) => (await import("./checkpointer.js")).runCheckpointerBench(args),
  },
  agent: {
    description: "a scripted 100-round conversation: our agent graph + saver vs a plain LangGraph agent + PostgresSaver",
    run: async (args) => (await import("./agent.js")).runAgentBench(args),
  },
  commits: {
    description: "database commits per model + tool round of a run executed by the runtime",
    run: async (args) => (await import("./round-commits.js")).runCommitsBench(args),
  },
  graph: {
    description: "user graphs (20-node linear, 3-node loop of 100 steps): devmind runtime vs LangGraph + official PostgresSaver, time and commits per step",
    run: async (args) => (await import("./graph.js")).runGraphBench(args),
  },
  store: {
    description: "memory store: our PostgresStore vs the official PostgresStore on PostgreSQL (put, batch put, get, search, namespaces), then PGlite",
    run: async (args) => (await import("./store.js")).runStoreBench(args),
  },
  observers: {
    description: "CPU per run of the metrics and span observers (docs/operations.md), in process, against a local OTLP sink",
    run: async (args) => (await import("./observers.js")).runObserversBench(args),
  },
  server: {
    description: "the official SDK against devmind serve (PostgreSQL) and the official in-memory server: runs.wait / runs.stream throughput, latency, transactions per run, idle transactions",
    run: async (args) => (await import("./server.js")).runServerBench(args),
  },
  "dev-reload": {
    description: "devmind dev: time from an edit of a module a graph imports to the new graph serving (built CLI, temporary project)",
    run: async (args) => (await import("./dev-reload.js")).runDevReloadBench(args),
  },
  crash: {
    description: "SIGKILL of devmind serve during a tool call -> the run's recovery in another process (PostgreSQL), median of 10",
    run: async (args) => (await import("./crash-recovery.js")).runCrashBench(args),
  },
  runs: {
    description: "runtime workers on PostgreSQL: runs and steps per second at concurrency 1/4/16, SIGKILL-to-next-step, worker memory with interrupted runs",
    run: async (args) => (await import("./runs.js")).runRunsBench(args),
  },
};

function listBenches(): string {
  return Object.entries(BENCHES)
    .map(([name, bench]) => `  ${name.padEnd(14)} ${bench.description}`)
    .join("\n");
}

const [name, ...rest] = process.argv.slice(2);
const bench = name !== undefined && Object.hasOwn(BENCHES, name) ? BENCHES[name] : undefined;
if (bench === undefined) {
  console.error(`${name === undefined ? "no bench given" : `unknown bench ${JSON.stringify(name)}`}; usage: npm run bench -- <name> [options]\n${listBenches()}`);
  process.exitCode = 2;
} else {
  try {
    process.exitCode = await bench.run(rest);
  } catch (error) {
    console.error(`bench ${name} failed:`, error);
    process.exitCode = 1;
  }
}
