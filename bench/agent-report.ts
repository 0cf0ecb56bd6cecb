import type { AgentRun } from "./agent-runs.js";
import type { ChannelFootprint } from "./channel-footprint.js";
import { PROBED_METHODS } from "./saver-probe.js";
import { fixed, formatBytes, formatTable, median } from "./stats.js";

/** Which side went first in a round. */
export type Side = "ours" | "peer";

/** One round: each side on PostgreSQL and on MemorySaver, in `order`. */
export interface AgentRound {
  round: number;
  order: Side[];
  ours: AgentRun;
  oursMemory: AgentRun;
  peer: AgentRun;
  peerMemory: AgentRun;
  seconds: number;
}

/** Ratio goals of issue 3 item 8, ours/theirs, at most. */
export const AGENT_GOALS = { bytes: 0.1, time: 0.5 } as const;

/** A median per side and the ratio of the medians, with its goal when it has one. */
export interface Compared {
  ours: number;
  peer: number;
  /** Median ours over median theirs. */
  ratio: number;
  goal: number | null;
  pass: boolean | null;
}

/** The comparison across rounds (medians). */
export interface AgentSummary {
  bytes: Compared;
  /** The schema right after migrate / setup, before the conversation. */
  emptyBytes: Compared;
  /** Per round: bytes minus empty bytes; the medians of those. */
  addedBytes: Compared;
  /**
   * The values the saver wrote, uncompressed (`octet_length` of every stored column): what the
   * issue's "a 100-round thread writes ~8 MiB" counts, before PostgreSQL's TOAST compression.
   */
  rawValueBytes: Compared;
  timeMs: Compared;
  checkpoints: Compared;
  rows: Compared;
  memoryMs: { ours: number; peer: number };
  /** (median invoke on PostgreSQL − median invoke on MemorySaver) / median checkpoints, ms. */
  perStepOverheadMs: { ours: number; peer: number };
  perRound: { round: number; order: Side[]; ours: RoundFigures; peer: RoundFigures; timeRatio: number; bytesRatio: number }[];
}

/** One side's figures in one round. */
export interface RoundFigures {
  invokeMs: number;
  memoryMs: number;
  bytes: number;
  /** Bytes of the freshly created schema, before the conversation. */
  emptyBytes: number;
  checkpoints: number;
  rows: number;
  /** Uncompressed bytes of every stored value (sum of the channel breakdown's `rawBytes`). */
  rawValueBytes: number;
}

/** The JSON written to bench/results/agent.json, and what `printAgentReport` prints. */
export interface AgentResults {
  bench: string;
  command: string;
  date: string;
  node: string;
  postgres: { version: string | null; url: string };
  machine: { cores: number; cpu: string; platform: string; arch: string };
  conversation: { modelRounds: number; toolRounds: number; thinkingChars: number; warmupModelRounds: number; recursionLimit: number; ourLimits: Record<string, number> };
  summary: AgentSummary;
  rounds: AgentRound[];
}

function totalRows(run: AgentRun): number {
  return run.footprint?.tables.reduce((sum, t) => sum + t.rows, 0) ?? 0;
}

function figures(run: AgentRun, memory: AgentRun): RoundFigures {
  return { invokeMs: run.invokeMs, memoryMs: memory.invokeMs, bytes: run.footprint?.totalBytes ?? 0, emptyBytes: run.emptyBytes ?? 0, checkpoints: run.checkpoints, rows: totalRows(run), rawValueBytes: rawValueBytes(run) };
}

function rawValueBytes(run: AgentRun): number {
  return run.channels?.reduce((sum, c) => sum + c.rawBytes, 0) ?? 0;
}

function compare(ours: number[], peer: number[], goal: number | null): Compared {
  const o = median(ours);
  const p = median(peer);
  const ratio = o / p;
  return { ours: o, peer: p, ratio, goal, pass: goal === null ? null : ratio <= goal };
}

/** Medians across rounds, ratios of the medians, PASS/MISS per goal, per-step overhead. */
export function summarizeAgentRounds(rounds: readonly AgentRound[]): AgentSummary {
  const perRound = rounds.map((r) => {
    const ours = figures(r.ours, r.oursMemory);
    const peer = figures(r.peer, r.peerMemory);
    return { round: r.round, order: r.order, ours, peer, timeRatio: ours.invokeMs / peer.invokeMs, bytesRatio: ours.bytes / peer.bytes };
  });
  const pick = (side: Side, key: keyof RoundFigures) => perRound.map((r) => r[side][key]);
  const checkpoints = compare(pick("ours", "checkpoints"), pick("peer", "checkpoints"), null);
  const timeMs = compare(pick("ours", "invokeMs"), pick("peer", "invokeMs"), AGENT_GOALS.time);
  const memoryMs = { ours: median(pick("ours", "memoryMs")), peer: median(pick("peer", "memoryMs")) };
  return {
    bytes: compare(pick("ours", "bytes"), pick("peer", "bytes"), AGENT_GOALS.bytes),
    emptyBytes: compare(pick("ours", "emptyBytes"), pick("peer", "emptyBytes"), null),
    addedBytes: compare(
      perRound.map((r) => r.ours.bytes - r.ours.emptyBytes),
      perRound.map((r) => r.peer.bytes - r.peer.emptyBytes),
      null,
    ),
    rawValueBytes: compare(pick("ours", "rawValueBytes"), pick("peer", "rawValueBytes"), null),
    timeMs,
    checkpoints,
    rows: compare(pick("ours", "rows"), pick("peer", "rows"), null),
    memoryMs,
    perStepOverheadMs: { ours: (timeMs.ours - memoryMs.ours) / checkpoints.ours, peer: (timeMs.peer - memoryMs.peer) / checkpoints.peer },
    perRound,
  };
}

const ms = (value: number): string => `${fixed(value, 0)} ms`;
const ratio = (value: number): string => `${fixed(value, 2)}x`;
const verdict = (pass: boolean | null): string => (pass === null ? "" : pass ? "PASS" : "MISS");

function mainTable(results: AgentResults): string {
  const s = results.summary;
  const rounds = results.conversation.modelRounds;
  const row = (label: string, c: Compared, format: (v: number) => string): string[] => [
    label,
    format(c.ours),
    format(c.peer),
    ratio(c.ratio),
    c.goal === null ? "(info)" : `<= ${fixed(c.goal, 2)}x`,
    verdict(c.pass),
  ];
  const info = (label: string, ours: string, peer: string, r: number): string[] => [label, ours, peer, ratio(r), "(info)", ""];
  const rows = [
    row("bytes stored (saver tables)", s.bytes, formatBytes),
    row("  of it, the empty schema", s.emptyBytes, formatBytes),
    row("  of it, added by the conversation", s.addedBytes, formatBytes),
    row("values written, uncompressed", s.rawValueBytes, formatBytes),
    row("invoke wall time", s.timeMs, ms),
    row("checkpoints written", s.checkpoints, (v) => fixed(v, 0)),
    row("rows, all tables", s.rows, (v) => fixed(v, 0)),
    info("bytes per model round", formatBytes(s.bytes.ours / rounds), formatBytes(s.bytes.peer / rounds), s.bytes.ratio),
    info("ms per model round", fixed(s.timeMs.ours / rounds, 2), fixed(s.timeMs.peer / rounds, 2), s.timeMs.ratio),
    info("checkpoints per model round", fixed(s.checkpoints.ours / rounds, 2), fixed(s.checkpoints.peer / rounds, 2), s.checkpoints.ratio),
    info("invoke on MemorySaver", ms(s.memoryMs.ours), ms(s.memoryMs.peer), s.memoryMs.ours / s.memoryMs.peer),
    info("PostgreSQL minus MemorySaver", ms(s.timeMs.ours - s.memoryMs.ours), ms(s.timeMs.peer - s.memoryMs.peer), (s.timeMs.ours - s.memoryMs.ours) / (s.timeMs.peer - s.memoryMs.peer)),
    info("  per checkpoint (ms)", fixed(s.perStepOverheadMs.ours, 3), fixed(s.perStepOverheadMs.peer, 3), s.perStepOverheadMs.ours / s.perStepOverheadMs.peer),
  ];
  return formatTable(["metric (median of rounds)", "devmind", "plain LangGraph", "ours/theirs", "goal", ""], rows);
}

function perRoundTable(summary: AgentSummary): string {
  const header = ["per round", ...summary.perRound.map((r) => `round ${r.round} (${r.order[0] === "ours" ? "ours" : "theirs"} first)`)];
  const rows = [
    ["invoke ms: ours / theirs", ...summary.perRound.map((r) => `${fixed(r.ours.invokeMs, 0)} / ${fixed(r.peer.invokeMs, 0)} = ${ratio(r.timeRatio)}`)],
    ["on MemorySaver ms: ours / theirs", ...summary.perRound.map((r) => `${fixed(r.ours.memoryMs, 0)} / ${fixed(r.peer.memoryMs, 0)}`)],
    ["bytes: ours / theirs", ...summary.perRound.map((r) => `${formatBytes(r.ours.bytes)} / ${formatBytes(r.peer.bytes)} = ${ratio(r.bytesRatio)}`)],
    ["checkpoints: ours / theirs", ...summary.perRound.map((r) => `${r.ours.checkpoints} / ${r.peer.checkpoints}`)],
    ["rows: ours / theirs", ...summary.perRound.map((r) => `${r.ours.rows} / ${r.peer.rows}`)],
  ];
  return formatTable(header, rows);
}

function tablesTable(round: AgentRound): string {
  const rows: string[][] = [];
  for (const [label, run] of [["devmind", round.ours], ["plain LangGraph", round.peer]] as const) {
    for (const t of run.footprint?.tables ?? []) {
      const split = run.tables?.find((s) => s.table === t.table);
      const share = run.footprint === null ? Number.NaN : (100 * t.bytes) / run.footprint.totalBytes;
      rows.push([label, t.table, String(t.rows), formatBytes(t.bytes), `${fixed(share, 0)}%`, formatBytes(split?.heapBytes ?? Number.NaN), formatBytes(split?.toastBytes ?? Number.NaN), formatBytes(split?.indexBytes ?? Number.NaN)]);
    }
  }
  return formatTable(["saver", "table", "rows", "total bytes", "share", "heap", "TOAST", "indexes"], rows);
}

/** The breakdown rows of one run: channels with at least `minShare` of the stored bytes, the rest folded into one row. */
function channelRows(label: string, channels: readonly ChannelFootprint[], minShare: number): string[][] {
  const total = channels.reduce((sum, c) => sum + c.valueBytes, 0);
  const shown = channels.filter((c) => c.valueBytes >= total * minShare);
  const rest = channels.filter((c) => c.valueBytes < total * minShare);
  const line = (table: string, channel: string, c: { rows: number; valueBytes: number; rawBytes: number }): string[] => [
    label,
    table,
    channel,
    String(c.rows),
    formatBytes(c.valueBytes),
    fixed(c.rows === 0 ? Number.NaN : c.valueBytes / c.rows, 0),
    formatBytes(c.rawBytes),
    `${fixed((100 * c.valueBytes) / total, 0)}%`,
  ];
  const rows = shown.map((c) => line(c.table, c.channel === "" ? "(whole table)" : c.channel, c));
  if (rest.length > 0) {
    const sum = rest.reduce((acc, c) => ({ rows: acc.rows + c.rows, valueBytes: acc.valueBytes + c.valueBytes, rawBytes: acc.rawBytes + c.rawBytes }), { rows: 0, valueBytes: 0, rawBytes: 0 });
    rows.push(line("", `(${rest.length} smaller)`, sum));
  }
  rows.push(line("", "total", channels.reduce((acc, c) => ({ rows: acc.rows + c.rows, valueBytes: acc.valueBytes + c.valueBytes, rawBytes: acc.rawBytes + c.rawBytes }), { rows: 0, valueBytes: 0, rawBytes: 0 })));
  return rows;
}

function channelsTable(round: AgentRound): string {
  const rows = [...channelRows("devmind", round.ours.channels ?? [], 0.02), ...channelRows("plain LangGraph", round.peer.channels ?? [], 0.02)];
  return formatTable(["saver", "table", "channel", "rows", "stored", "B/row", "raw", "share"], rows);
}

function callsTable(round: AgentRound): string {
  const cell = (run: AgentRun, method: (typeof PROBED_METHODS)[number]): string => {
    const c = run.saverCalls[method];
    return c.calls === 0 ? "0" : `${c.calls} (${fixed(c.totalMs, 0)} ms)`;
  };
  const rows = PROBED_METHODS.map((method) => [method, cell(round.ours, method), cell(round.oursMemory, method), cell(round.peer, method), cell(round.peerMemory, method)]);
  return formatTable(["saver method", "devmind on PG", "devmind on memory", "plain on PG", "plain on memory"], rows);
}

/** Prints the comparison, the per-round figures, and where the bytes and calls went in the last round. */
export function printAgentReport(results: AgentResults): void {
  const c = results.conversation;
  const s = results.summary;
  const out: string[] = [];
  out.push(`agent bench: ${results.date}, node ${results.node}, ${results.machine.cores} cores (${results.machine.cpu})`);
  out.push(
    `conversation: one thread, ${c.modelRounds} model rounds (${c.toolRounds} x add + the final answer), ~${c.thinkingChars} chars of ` +
      `thinking text per AI message, scripted model; recursionLimit ${c.recursionLimit}; our limits ${JSON.stringify(c.ourLimits)}`,
  );
  out.push(
    `devmind = buildAgentGraph + PostgresCheckpointSaver; plain LangGraph = StateGraph(MessagesAnnotation) + ToolNode + toolsCondition + ` +
      `the official PostgresSaver (tool messages carry the same envelope text on both sides)`,
  );
  out.push(
    `\nPostgreSQL ${results.postgres.version} at ${results.postgres.url}: median of ${results.rounds.length} rounds, each side in a fresh schema, ` +
      `alternating which goes first; each side also ran once on MemorySaver per round; a ${c.warmupModelRounds}-round warm-up of each first (not measured)`,
  );
  out.push(mainTable(results));
  out.push(
    `ours/theirs = median of ours over median of theirs (lower is better). Bytes: sum of pg_total_relation_size over the saver's tables ` +
      `(checkpoint tables and migration bookkeeping; heap + TOAST + indexes, no VACUUM).`,
  );
  out.push(
    `\ndevmind per-step overhead over MemorySaver: (${fixed(s.timeMs.ours, 0)} ms on PostgreSQL - ${fixed(s.memoryMs.ours, 0)} ms on MemorySaver) / ` +
      `${fixed(s.checkpoints.ours, 0)} supersteps (checkpoints written) = ${fixed(s.perStepOverheadMs.ours, 3)} ms per step ` +
      `(plain LangGraph on PostgresSaver: ${fixed(s.perStepOverheadMs.peer, 3)} ms per step over ${fixed(s.checkpoints.peer, 0)} steps)`,
  );
  out.push(`\n${perRoundTable(s)}`);
  const last = results.rounds[results.rounds.length - 1];
  if (last !== undefined) {
    out.push(`\nschema contents after round ${last.round}\n${tablesTable(last)}`);
    out.push(
      `\nstored value bytes per table and channel, round ${last.round} (sum of pg_column_size of every column, i.e. after pglz ` +
        `compression, without tuple headers, page slack or indexes; raw = uncompressed; channels under 2% folded)\n${channelsTable(last)}`,
    );
    out.push(
      `\nsaver calls during the invoke, round ${last.round}: count (summed time from call to settle). LangGraph does not wait for saves ` +
        `between steps; each put waits for the previous put and the step's message writes, so on PostgreSQL these times overlap and ` +
        `include queueing; on MemorySaver they are the serialization CPU\n${callsTable(last)}`,
    );
  }
  console.log(out.join("\n"));
}
