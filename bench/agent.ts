import { mkdir, writeFile } from "node:fs/promises";
import { availableParallelism, cpus } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { benchDatabaseUrl, MAX_ROUNDS, missingUrlMessage, parseBenchArgs, printableUrl, URL_VARIABLES } from "./bench-env.js";
import { printAgentReport, summarizeAgentRounds, type AgentResults, type AgentRound, type Side } from "./agent-report.js";
import { OUR_LIMITS, RECURSION_LIMIT, runOursOnMemory, runOursOnPostgres, runPeer, runPeerOnMemory, type AgentRun } from "./agent-runs.js";
import { AGENT_SCRIPT, buildAgentScript } from "./agent-script.js";
import type { RunQuery } from "./footprint.js";
import type { ScriptedTurn } from "../src/model/scripted-turns.js";

/** Model rounds of the unmeasured warm-up conversation each side runs before round 1. */
const WARMUP_MODEL_ROUNDS = 10;
const RESULTS_FILE = join(dirname(fileURLToPath(import.meta.url)), "results", "agent.json");

const USAGE = `usage: npm run bench -- agent [--rounds N]
  --rounds N       rounds, alternating which side goes first (default 3, at most ${MAX_ROUNDS})
PostgreSQL URL from ${URL_VARIABLES.join(", else ")}.`;

/** One side on PostgreSQL, then the same side on MemorySaver. */
async function runSide(side: Side, url: string, admin: RunQuery, turns: readonly ScriptedTurn[], rounds: number): Promise<[AgentRun, AgentRun]> {
  if (side === "ours") return [await runOursOnPostgres(url, admin, turns, rounds), await runOursOnMemory(turns, rounds)];
  return [await runPeer(url, admin, turns, rounds), await runPeerOnMemory(turns, rounds)];
}

async function runRound(round: number, url: string, admin: RunQuery, turns: readonly ScriptedTurn[]): Promise<AgentRound> {
  const order: Side[] = round % 2 === 1 ? ["ours", "peer"] : ["peer", "ours"];
  const started = performance.now();
  const runs: Partial<Record<Side, [AgentRun, AgentRun]>> = {};
  for (const side of order) runs[side] = await runSide(side, url, admin, turns, AGENT_SCRIPT.rounds);
  if (runs.ours === undefined || runs.peer === undefined) throw new Error("agent bench: a side did not run");
  const seconds = (performance.now() - started) / 1000;
  const [ours, oursMemory] = runs.ours;
  const [peer, peerMemory] = runs.peer;
  console.error(
    `round ${round}: ${order.join(" then ")}, ${seconds.toFixed(1)} s; invoke ours ${ours.invokeMs.toFixed(0)} ms ` +
      `(memory ${oursMemory.invokeMs.toFixed(0)}), theirs ${peer.invokeMs.toFixed(0)} ms (memory ${peerMemory.invokeMs.toFixed(0)})`,
  );
  return { round, order, ours, oursMemory, peer, peerMemory, seconds };
}

/**
 * `npm run bench -- agent`: the same scripted 100-round conversation through devmind's agent
 * graph on PostgresCheckpointSaver and through a plain LangGraph agent (MessagesAnnotation +
 * ToolNode + the official PostgresSaver), on one PostgreSQL, each side in a fresh schema per round
 * (dropped afterwards), alternating which goes first; plus each side on MemorySaver for our
 * per-step overhead. Prints the tables and writes `bench/results/agent.json`.
 * Returns the exit code: 0 done (goals missed are reported, not failed), 1 the database is
 * unreachable, 2 bad arguments or no database configured.
 */
export async function runAgentBench(args: readonly string[]): Promise<number> {
  const parsed = parseBenchArgs(args, {}, USAGE);
  if ("exit" in parsed) return parsed.exit;
  const { rounds } = parsed;
  const url = benchDatabaseUrl();
  if (url === undefined) {
    console.error(
      missingUrlMessage("agent"),
    );
    return 2;
  }

  const turns = buildAgentScript(AGENT_SCRIPT.rounds);
  const warmupTurns = buildAgentScript(WARMUP_MODEL_ROUNDS);
  const adminPool = new pg.Pool({ connectionString: url, max: 2 });
  const admin: RunQuery = (text, params) => adminPool.query(text, params);
  const roundResults: AgentRound[] = [];
  let serverVersion: string | null = null;
  try {
    try {
      const shown = (await admin("SHOW server_version")).rows as { server_version: string }[];
      serverVersion = shown[0]?.server_version ?? null;
    } catch (error) {
      console.error(`agent bench: cannot reach PostgreSQL at ${printableUrl(url)}: ${(error as Error).message}`);
      return 1;
    }
    console.error(`PostgreSQL ${serverVersion} at ${printableUrl(url)}; ${rounds} rounds of ${AGENT_SCRIPT.rounds} model rounds`);
    const warmupStarted = performance.now();
    for (const side of ["ours", "peer"] as const) await runSide(side, url, admin, warmupTurns, WARMUP_MODEL_ROUNDS);
    console.error(`warm-up (${WARMUP_MODEL_ROUNDS} model rounds each side): ${((performance.now() - warmupStarted) / 1000).toFixed(1)} s`);
    for (let round = 1; round <= rounds; round++) roundResults.push(await runRound(round, url, admin, turns));
  } finally {
    await adminPool.end();
  }

  const results: AgentResults = {
    bench: "agent",
    command: "npm run bench -- agent",
    date: new Date().toISOString(),
    node: process.version,
    postgres: { version: serverVersion, url: printableUrl(url) },
    machine: { cores: availableParallelism(), cpu: cpus()[0]?.model ?? "unknown", platform: process.platform, arch: process.arch },
    conversation: {
      modelRounds: AGENT_SCRIPT.rounds,
      toolRounds: AGENT_SCRIPT.rounds - 1,
      thinkingChars: AGENT_SCRIPT.thinkingChars,
      warmupModelRounds: WARMUP_MODEL_ROUNDS,
      recursionLimit: RECURSION_LIMIT,
      ourLimits: { ...OUR_LIMITS },
    },
    summary: summarizeAgentRounds(roundResults),
    rounds: roundResults,
  };
  printAgentReport(results);
  await mkdir(dirname(RESULTS_FILE), { recursive: true });
  await writeFile(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nfull results: ${relative(process.cwd(), RESULTS_FILE)}`);
  return 0;
}
