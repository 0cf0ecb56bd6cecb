import type { ActionRequest } from "../vocabulary/hitl.js";
import { unknownOutcomesLine } from "../vocabulary/unknown-outcomes.js";
import { RunConflictError } from "../errors.js";
import type { Decision } from "../vocabulary/decisions.js";
import type { RunRecord } from "../runtime/queue/run-record.js";
import { isInteractive, type OutputOptions } from "./cli-options.js";
import { EventTail } from "./event-tail.js";
import { exitForRun } from "./exit-codes.js";
import { foldArgs } from "./fold.js";
import type { OpenedRuntime } from "./open-runtime.js";
import { askApproval } from "./prompt.js";
import { Timeline } from "./timeline.js";
import { TimelineFeed } from "./timeline-feed.js";
import { CallDetails } from "./call-details.js";
import { CLI_DEFAULTS } from "../constants.js";
import type { Runtime } from "../runtime/runtime.js";
import { threadView, valueLines, type ThreadView } from "./thread-view.js";
import { cliName } from "./cli-name.js";
import { holdRunWhenOutputCloses, writeStderr, writeStdout } from "./closed-output.js";

/** How `driveRun` talks to the user. */
export interface DriveOptions {
  /** NDJSON on stdout: every stored event, then the result line. */
  json: boolean;
  verbose: boolean;
  /** Ask approvals at the terminal (a TTY on stdin and stdout, and not `--json`). */
  interactive: boolean;
  /** Recorded on decisions made at the prompt. */
  principal: string;
  /** Printed first (not in `--json`), e.g. which run on which thread with which model. */
  intro?: string;
  /** Print the commands that continue a waiting run (default true; the demo explains itself). */
  explainWaiting?: boolean;
}

/** Exit code after a second Ctrl-C: the conventional 128 + SIGINT. */
export const FORCED_EXIT = 130;

/** DriveOptions from a command's `--json` / `--verbose` flags: approvals are asked only on a TTY without `--json`. */
export function driveOptionsFrom(flags: OutputOptions, principal: string, intro: string): DriveOptions {
  return { json: flags.json === true, verbose: flags.verbose === true, interactive: flags.json !== true && isInteractive(), principal, intro };
}

/**
 * Executes a run in this process and shows it: a live timeline (or NDJSON with `--json`), the
 * approval prompt on a terminal (then continues the run), the commands to continue when nobody
 * can be asked. The first Ctrl-C cancels the run and waits for it to stop (exit 4); a second one
 * exits at once with 130, leaving the run to `devmind resume` / `cancel`. Returns the exit code
 * for the run's status (CONTRACT section 7). If a worker claimed the run first (PostgreSQL), it
 * follows that worker instead. If stdout's reader goes away (`| head -1`), the run still goes on
 * to its next stop in this process, its output dropped (see closed-output.ts), and the exit code
 * is its status's as usual.
 */
export async function driveRun(opened: OpenedRuntime, firstRunId: string, options: DriveOptions): Promise<number> {
  const release = holdRunWhenOutputCloses(firstRunId);
  try {
    return await driveHeldRun(opened, firstRunId, options);
  } finally {
    release();
  }
}

async function driveHeldRun(opened: OpenedRuntime, firstRunId: string, options: DriveOptions): Promise<number> {
  const { runtime } = opened;
  // the run followed now: a decision at the prompt creates the run that resumes the thread
  let runId = firstRunId;
  const out = writeStdout;
  const timeline = options.json ? null : new Timeline({ tty: process.stdout.isTTY === true, verbose: options.verbose, write: out });
  const note = (text: string): void => (timeline === null ? writeStderr(`${text}\n`) : timeline.line(text));
  const tailOf = (id: string): EventTail | null => (options.json ? new EventTail(runtime, id, (event) => out(`${JSON.stringify(event)}\n`)) : null);
  let tail = tailOf(runId);
  const promptAbort = new AbortController();
  let cancelling = false;
  // the cancel request itself: waited for before reading the run's end, since a run waiting at an
  // approval is already "stopped" for `wait` until the cancel has been stored
  let cancelRequest: Promise<unknown> = Promise.resolve();
  let interrupts = 0;
  let firstInterruptAt = 0;
  // the approval prompt is open: the run has ended at its interrupt, there is nothing to cancel
  let asking = false;
  const onInterrupt = (): void => {
    // one press can reach us twice (the terminal's SIGINT and the raw key, when the prompt
    // switches modes at that moment): a second Ctrl-C counts only once the first has been seen
    if (interrupts === 1 && Date.now() - firstInterruptAt < CLI_DEFAULTS.secondInterruptMinMs) return;
    interrupts += 1;
    if (interrupts === 1) firstInterruptAt = Date.now();
    if (interrupts >= 2) {
      timeline?.stop();
      writeStderr(`\ndevmind: forced exit; run ${runId} is left as it is (\`${cliName()} resume ${runId}\` or \`${cliName()} cancel ${runId}\`)\n`);
      process.exit(FORCED_EXIT);
    }
    cancelling = true;
    promptAbort.abort();
    if (asking) {
      // nothing runs while the thread waits at the prompt: stop asking, it keeps waiting
      note("■ stopped asking; the thread still waits (Ctrl-C again to quit at once)");
      return;
    }
    note("■ cancelling… (Ctrl-C again to quit at once)");
    cancelRequest = runtime.runs.cancel(runId).catch(() => undefined);
  };
  const current = await runtime.runs.get(runId);
  timeline?.showNodes(!runtime.graphs.reportsSteps(current.graph_id));
  const feed = timeline === null ? null : new TimelineFeed(timeline, new CallDetails(runtime, current.thread_id), options.verbose);
  process.on("SIGINT", onInterrupt);
  if (timeline !== null && options.intro !== undefined) timeline.line(options.intro);
  const subscribeTo = (id: string): (() => void) => (feed === null ? () => undefined : runtime.runs.subscribe(id, (event) => feed.push(event)));
  let unsubscribe = subscribeTo(runId);
  await tail?.start();
  try {
    // a run still waiting for a decision is asked about (or explained), not claimed again
    const waiting = current.waiting && (await openRequests(opened, runId)).length > 0;
    opened.logger.debug({ event: "run.drive", run_id: runId, status: current.status, waiting, interactive: options.interactive }, waiting ? "run waits for a decision" : "executing the run in this process");
    const follow = { feed, cancelling: () => cancelling, note };
    // a run that ended at an interrupt is not executed again: its thread waits for a decision or a value
    let record = current.waiting ? current : await executeOrFollow(opened, runId, follow);
    while (record.waiting && options.interactive && !cancelling) {
      await feed?.flush();
      asking = true;
      const decisions = await askAll(opened, runId, { ...options, signal: promptAbort.signal, onInterrupt }, timeline).finally(() => {
        asking = false;
      });
      if (decisions === null || cancelling) break;
      const next = await runtime.runs.decide(runId, { decisions }, { principal: options.principal }, { executeHere: true });
      if (next.run_id === runId) continue;
      // the decisions created the run that resumes the thread: follow that one from here
      await tail?.stop();
      unsubscribe();
      runId = next.run_id;
      tail = tailOf(runId);
      unsubscribe = subscribeTo(runId);
      await tail?.start();
      record = await executeOrFollow(opened, runId, follow);
    }
    if (cancelling) {
      await cancelRequest;
      record = await runtime.runs.wait(runId, { timeoutMs: CLI_DEFAULTS.cancelWaitMs });
    }
    else record = await runtime.runs.get(runId);
    await tail?.stop();
    unsubscribe();
    await feed?.flush();
    timeline?.stop();
    const view = await threadView(runtime, record);
    if (options.json) out(`${JSON.stringify(await resultLine(runtime, record, view))}\n`);
    else {
      // the graph's final values, unless it says its answer (the timeline showed that)
      if (!runtime.graphs.reportsAnswer(record.graph_id)) for (const line of valueLines(view.values, options.verbose)) out(`${line}\n`);
      out(`${await runSummary(runtime, record)}\n`);
    }
    if (record.waiting && options.explainWaiting !== false) await printContinue(opened, record, options.json, timeline !== null);
    return exitForRun(record);
  } finally {
    process.removeListener("SIGINT", onInterrupt);
    unsubscribe();
    timeline?.stop();
  }
}

/**
 * The final `--json` line (CONTRACT section 7): the run, and its thread's values and pending
 * interrupts as plain JSON (`threadView`; read now unless given).
 */
export async function resultLine(runtime: Runtime, run: RunRecord, view?: ThreadView): Promise<Record<string, unknown>> {
  const state = view ?? (await threadView(runtime, run));
  return {
    type: "result",
    run_id: run.run_id,
    thread_id: run.thread_id,
    status: run.status,
    stop_reason: run.stop_reason,
    // the run this one resumes (a resume is a new run), null for one started with input
    resumes_run: run.resumes_run,
    answer: run.answer,
    values: state.values,
    interrupts: state.interrupts,
    model_rounds: run.model_rounds,
    tool_calls: run.tool_calls,
    // calls that may or may not have taken effect (TOOL_OUTCOME_UNKNOWN); the exit code stays the status's
    unknown_outcomes: run.unknown_outcomes,
  };
}

/**
 * One line for a person: status and stop reason, then what the graph counts — model rounds, tool
 * calls and tokens for a graph that reports them (`counters`), else the nodes that ran (`nodes`)
 * and the time it ran.
 */
export function summary(run: RunRecord, shown: { counters: boolean; nodes?: number | undefined }): string {
  const why = run.stop_reason === null ? "" : ` (${run.stop_reason})`;
  if (shown.counters) {
    const tokens = run.usage.input_tokens + run.usage.output_tokens;
    return `run ${run.run_id}: ${run.status}${why} · ${run.model_rounds} model round${run.model_rounds === 1 ? "" : "s"} · ${run.tool_calls} tool call${run.tool_calls === 1 ? "" : "s"} · ${tokens} tokens`;
  }
  const nodes = shown.nodes === undefined ? "" : ` · ${shown.nodes} node${shown.nodes === 1 ? "" : "s"}`;
  return `run ${run.run_id}: ${run.status}${why}${nodes} · ${duration(run.active_ms)}`;
}

/**
 * `summary` for a run as this runtime knows its graph: counters when the graph reports them, else
 * the nodes its stored events show; then, on a line of its own, the calls whose outcome is unknown.
 */
export async function runSummary(runtime: Runtime, run: RunRecord): Promise<string> {
  const counters = runtime.graphs.reportsCounters(run.graph_id);
  const warning = unknownOutcomesLine(run.unknown_outcomes);
  const tail = warning === "" ? "" : `\nwarning: ${warning}`;
  if (counters) return `${summary(run, { counters })}${tail}`;
  let nodes = 0;
  for await (const event of runtime.runs.events(run.run_id)) if (event.type === "node.finished") nodes += 1;
  return `${summary(run, { counters, nodes })}${tail}`;
}

/** `850 ms`, `1.2 s`, `3 min 5 s`. */
function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** The calls of a waiting run that nobody has decided yet. */
export async function openRequests(opened: OpenedRuntime, runId: string): Promise<ActionRequest[]> {
  const requests = await opened.runtime.runs.pendingApprovals(runId);
  const decided = new Set((await opened.runtime.runs.decisions(runId)).map((d) => d.tool_call_id));
  return requests.filter((request) => !decided.has(request.tool_call_id));
}

/**
 * Tells the user (stdout, or stderr under `--json`) exactly how to continue a waiting run; the
 * waiting calls are listed unless the timeline above just showed them (`listed`).
 */
export async function printContinue(opened: OpenedRuntime, run: RunRecord, json: boolean, listed = false): Promise<void> {
  const open = await openRequests(opened, run.run_id).catch(() => []);
  if (open.length === 0 && (run.interrupts ?? []).length > 0) {
    // a graph's own interrupt(): answered with a value
    const lines = [`run ${run.run_id} is waiting for a value:`];
    for (const item of run.interrupts ?? []) lines.push(`  ${foldArgs(item.value, CLI_DEFAULTS.foldedArgsChars)}  [interrupt ${item.id}]`);
    lines.push("continue with:", `  ${cliName()} resume ${run.run_id} --value '<json>'`);
    if ((run.interrupts ?? []).length > 1) lines.push("  (several interrupts wait: answer each with --interrupt ID --value '<json>')");
    (json ? writeStderr : writeStdout)(`${lines.join("\n")}\n`);
    return;
  }
  const lines = listed ? [] : [`run ${run.run_id} is waiting for approval:`];
  if (!listed) for (const request of open) lines.push(`  ${request.name}(${foldArgs(request.args, CLI_DEFAULTS.foldedArgsChars)})  [call ${request.tool_call_id}]`);
  lines.push("continue with one of:", `  ${cliName()} approve ${run.run_id}`, `  ${cliName()} reject ${run.run_id} --reason "why"`);
  if (open.length > 1) lines.push("  (add --call TOOL_CALL_ID to decide one call at a time)");
  (json ? writeStderr : writeStdout)(`${lines.join("\n")}\n`);
}

interface FollowOptions {
  feed: TimelineFeed | null;
  cancelling: () => boolean;
  note: (text: string) => void;
}

/**
 * `runs.execute`, or — when a worker claimed the run first (on PostgreSQL a worker may claim a
 * run the moment it is queued or decided) — following that worker: its stored events go to the
 * timeline until the run ends or waits for approval.
 */
async function executeOrFollow(opened: OpenedRuntime, runId: string, options: FollowOptions): Promise<RunRecord> {
  const { runtime } = opened;
  const seen = await opened.runtime.runs.lastEventSeq(runId);
  try {
    return await runtime.runs.execute(runId);
  } catch (error) {
    if (!(error instanceof RunConflictError)) throw error;
    const run = await runtime.runs.get(runId);
    if (options.cancelling() && run.status === "interrupted") return run;
    if (run.status !== "running" && run.status !== "pending") throw error;
    options.note(`another process (${run.lease?.owner ?? "a worker"}) is running this run; following it`);
    opened.logger.debug({ event: "run.follow", run_id: runId, owner: run.lease?.owner ?? null }, "following the run in another process");
    const feed = options.feed;
    const tail = feed === null ? null : new EventTail(runtime, runId, (event) => feed.push(event), seen);
    await tail?.start();
    try {
      return await runtime.runs.wait(runId);
    } finally {
      await tail?.stop();
    }
  }
}


async function askAll(
  opened: OpenedRuntime,
  runId: string,
  io: DriveOptions & { signal: AbortSignal; onInterrupt: () => void },
  timeline: Timeline | null,
): Promise<Decision[] | null> {
  timeline?.stop();
  const decisions: Decision[] = [];
  for (const request of await openRequests(opened, runId)) {
    let answer;
    try {
      answer = await askApproval(request, { input: process.stdin, output: process.stdout, signal: io.signal, onInterrupt: io.onInterrupt });
    } catch (error) {
      if (io.signal.aborted) return null;
      throw error;
    }
    const id = request.tool_call_id;
    if (answer.type === "later") return null;
    if (answer.type === "approve") decisions.push({ type: "approve", tool_call_id: id });
    else if (answer.type === "edit") decisions.push({ type: "edit", tool_call_id: id, editedAction: { name: request.name, args: answer.args } });
    else decisions.push({ type: "reject", tool_call_id: id, ...(answer.reason === undefined ? {} : { message: answer.reason }) });
    timeline?.event({
      type: "approval.decided",
      tool_call_id: id,
      tool: request.name,
      decision: answer.type,
      by: io.principal,
      reason: answer.type === "reject" ? (answer.reason ?? null) : null,
    });
  }
  return decisions;
}
