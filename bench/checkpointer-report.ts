import type { SchemaFootprint } from "./footprint.js";
import { OPS, type OpName } from "./run-workload.js";
import { fixed, formatBytes, formatTable, median, type OpStats } from "./stats.js";
import type { WORKLOAD } from "./workload.js";

/** One saver's measured run in one round. */
export interface SaverRun {
  schema: string;
  ops: Record<OpName, OpStats>;
  footprint: SchemaFootprint;
}

/** One round: the floor, then both savers in `order`. */
export interface RoundResult {
  round: number;
  order: ("ours" | "peer")[];
  floor: OpStats;
  ours: SaverRun;
  peer: SaverRun;
  seconds: { total: number; ours: number; peer: number };
}

/** Ratio goals ours/theirs from issue 2: ops/s at least this much. */
export const OPS_GOALS: Partial<Record<OpName, number>> = {
  put: 2.0,
  putWrites: 1.5,
  "getTuple latest": 1.2,
  "getTuple by id": 1.2,
  "list limit 10": 2.0,
};

/** Ratio goal for the schema bytes ours/theirs: at most this much. */
export const BYTES_GOAL = 1.0;

/** Medians across rounds of one saver's figures for one op. */
export interface SideSummary {
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

/** One op compared: medians per saver, the ratio of the median ops/s, the goal and verdict. */
export interface OpSummary {
  op: OpName;
  ours: SideSummary;
  peer: SideSummary;
  /** Median ours ops/s over median theirs ops/s: the figure the goal is judged on. */
  ratio: number;
  /** Median of the per-round ratios; far from `ratio` means the rounds were noisy. */
  roundRatioMedian: number;
  goal: number | null;
  pass: boolean | null;
  perRound: { ours: number; peer: number; ratio: number }[];
}

/** The comparison across rounds. */
export interface Summary {
  ops: OpSummary[];
  bytes: { ours: number; peer: number; ratio: number; goal: number; pass: boolean; perRound: { ours: number; peer: number }[] };
  floor: SideSummary;
}

/** The JSON written to bench/results/checkpointer.json, and what `printReport` prints. */
export interface CheckpointerResults {
  bench: string;
  command: string;
  date: string;
  node: string;
  postgres: { version: string | null; url: string } | null;
  machine: { cores: number; cpu: string; platform: string; arch: string };
  workload: Omit<typeof WORKLOAD, "messageBytes"> & { poolSize: number; floorCalls: number; messageBytes: { min: number; max: number; mean: number }; targetMessageBytes: number };
  summary: Summary | null;
  rounds: RoundResult[];
  pglite: { ops: Record<OpName, OpStats>; floor: OpStats; footprint: SchemaFootprint; seconds: number };
}

function sideMedian(stats: readonly OpStats[]): SideSummary {
  return {
    opsPerSec: median(stats.map((s) => s.opsPerSec)),
    p50Ms: median(stats.map((s) => s.p50Ms)),
    p99Ms: median(stats.map((s) => s.p99Ms)),
  };
}

/** Medians per metric across rounds, ratios of the median ops/s, and PASS/MISS per goal. */
export function summarizeRounds(rounds: readonly RoundResult[]): Summary {
  const ops = OPS.map((op): OpSummary => {
    const ours = sideMedian(rounds.map((r) => r.ours.ops[op]));
    const peer = sideMedian(rounds.map((r) => r.peer.ops[op]));
    const ratio = ours.opsPerSec / peer.opsPerSec;
    const goal = OPS_GOALS[op] ?? null;
    const perRound = rounds.map((r) => ({ ours: r.ours.ops[op].opsPerSec, peer: r.peer.ops[op].opsPerSec, ratio: r.ours.ops[op].opsPerSec / r.peer.ops[op].opsPerSec }));
    const roundRatioMedian = median(perRound.map((p) => p.ratio));
    return { op, ours, peer, ratio, roundRatioMedian, goal, pass: goal === null ? null : ratio >= goal, perRound };
  });
  const oursBytes = median(rounds.map((r) => r.ours.footprint.totalBytes));
  const peerBytes = median(rounds.map((r) => r.peer.footprint.totalBytes));
  const bytesRatio = oursBytes / peerBytes;
  return {
    ops,
    bytes: {
      ours: oursBytes,
      peer: peerBytes,
      ratio: bytesRatio,
      goal: BYTES_GOAL,
      pass: bytesRatio <= BYTES_GOAL,
      perRound: rounds.map((r) => ({ ours: r.ours.footprint.totalBytes, peer: r.peer.footprint.totalBytes })),
    },
    floor: sideMedian(rounds.map((r) => r.floor)),
  };
}

const ms = (value: number): string => fixed(value, 2);
const rate = (value: number): string => fixed(value, 0);
const verdict = (pass: boolean | null): string => (pass === null ? "" : pass ? "PASS" : "MISS");

function comparisonTable(summary: Summary): string {
  const rows = summary.ops.map((o) => [
    o.op,
    rate(o.ours.opsPerSec),
    ms(o.ours.p50Ms),
    ms(o.ours.p99Ms),
    rate(o.peer.opsPerSec),
    ms(o.peer.p50Ms),
    ms(o.peer.p99Ms),
    `${fixed(o.ratio, 2)}x`,
    `${fixed(o.roundRatioMedian, 2)}x`,
    o.goal === null ? "(info)" : `>= ${fixed(o.goal, 1)}x`,
    verdict(o.pass),
  ]);
  const b = summary.bytes;
  rows.push(["schema bytes", formatBytes(b.ours), "", "", formatBytes(b.peer), "", "", `${fixed(b.ratio, 2)}x`, "", `<= ${fixed(b.goal, 1)}x`, verdict(b.pass)]);
  return formatTable(["op", "ours ops/s", "p50 ms", "p99 ms", "PostgresSaver ops/s", "p50 ms", "p99 ms", "ours/theirs", "per-round", "goal", ""], rows);
}

function perRoundTable(results: CheckpointerResults, summary: Summary): string {
  const header = ["ops/s per round: ours / theirs", ...results.rounds.map((r) => `round ${r.round} (${r.order[0] === "ours" ? "ours" : "theirs"} first)`)];
  const rows = summary.ops.map((o) => [o.op, ...o.perRound.map((p) => `${rate(p.ours)} / ${rate(p.peer)} = ${fixed(p.ratio, 2)}x`)]);
  rows.push(["schema bytes", ...summary.bytes.perRound.map((p) => `${formatBytes(p.ours)} / ${formatBytes(p.peer)}`)]);
  rows.push(["SELECT 1 floor ops/s", ...results.rounds.map((r) => rate(r.floor.opsPerSec))]);
  rows.push(["round seconds (ours, theirs)", ...results.rounds.map((r) => `${fixed(r.seconds.total, 1)} (${fixed(r.seconds.ours, 1)}, ${fixed(r.seconds.peer, 1)})`)]);
  return formatTable(header, rows);
}

function tablesTable(round: RoundResult): string {
  const rows = [
    ...round.ours.footprint.tables.map((t) => ["ours", t.table, String(t.rows), formatBytes(t.bytes)]),
    ...round.peer.footprint.tables.map((t) => ["PostgresSaver", t.table, String(t.rows), formatBytes(t.bytes)]),
  ];
  return formatTable(["saver", "table", "rows", "bytes (heap+TOAST+indexes)"], rows);
}

function pgliteTable(pglite: CheckpointerResults["pglite"]): string {
  const rows = OPS.map((op) => [op, String(pglite.ops[op].count), rate(pglite.ops[op].opsPerSec), ms(pglite.ops[op].p50Ms), ms(pglite.ops[op].p99Ms)]);
  rows.push(["SELECT 1 floor", String(pglite.floor.count), rate(pglite.floor.opsPerSec), ms(pglite.floor.p50Ms), ms(pglite.floor.p99Ms)]);
  rows.push(["schema bytes", "", formatBytes(pglite.footprint.totalBytes), "", ""]);
  return formatTable(["op (ours on PGlite)", "count", "ops/s", "p50 ms", "p99 ms"], rows);
}

/** Prints the comparison (medians, goals, per-round figures, tables) and the PGlite run. */
export function printReport(results: CheckpointerResults): void {
  const w = results.workload;
  const out: string[] = [];
  out.push(`checkpointer bench: ${results.date}, node ${results.node}, ${results.machine.cores} cores (${results.machine.cpu})`);
  out.push(
    `workload: ${w.threads} threads x ${w.steps} steps (put + putWrites each, threads interleaved), messages ` +
      `${fixed(w.messageBytes.mean, 0)} B serialized (${w.messageBytes.min}-${w.messageBytes.max}); getTuple latest x${w.threads}, ` +
      `getTuple by id x${w.getByIdCalls}; a ${w.listCheckpoints}-checkpoint thread, then list(limit ${w.listLimit}) x${w.listCalls}; ` +
      `sequential calls, pools of ${w.poolSize}`,
  );
  const summary = results.summary;
  if (summary !== null && results.postgres !== null) {
    out.push(`\nPostgreSQL ${results.postgres.version} at ${results.postgres.url}: median of ${results.rounds.length} rounds, each saver in a fresh schema`);
    out.push(comparisonTable(summary));
    out.push(
      `ours/theirs = median ops/s over median ops/s (higher is better; goals are judged on it); per-round = median of ` +
        `the rounds' own ratios (a large gap between the two means noisy rounds); schema bytes: ours/theirs bytes (lower is better)`,
    );
    const f = summary.floor;
    out.push(`\nfloor, SELECT 1 on a pg.Pool (${w.floorCalls} round trips): ${rate(f.opsPerSec)} ops/s, p50 ${ms(f.p50Ms)} ms, p99 ${ms(f.p99Ms)} ms`);
    out.push(`\n${perRoundTable(results, summary)}`);
    const last = results.rounds[results.rounds.length - 1];
    if (last !== undefined) out.push(`\nschema contents after round ${last.round} (includes the ${w.warmupSteps}-step warm-up thread and migration bookkeeping)\n${tablesTable(last)}`);
  }
  out.push(`\nembedded PGlite (our saver only, one run, temporary data directory)`);
  out.push(pgliteTable(results.pglite));
  console.log(out.join("\n"));
}
