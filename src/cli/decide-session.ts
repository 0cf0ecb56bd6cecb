import type { Command } from "commander";
import { RunConflictError } from "../errors.js";
import type { Decision } from "../vocabulary/decisions.js";
import { checkRunId, type RunInterrupt, type RunRecord } from "../runtime/queue/run-record.js";
import { isHitlRequest } from "../vocabulary/hitl.js";
import { defaultPrincipal } from "./cli-options.js";
import { EXIT } from "./exit-codes.js";
import { openRuntimeOrServer } from "./remote/local-server.js";
import { executedWhere } from "./open-runtime.js";
import { loadProjectGraphs } from "./project-graphs.js";
import { holdRunWhenOutputCloses, writeStdout } from "./closed-output.js";
import { driveOptionsFrom, driveRun, openRequests, printContinue, resultLine } from "./run-session.js";
import { foldArgs } from "./fold.js";
import { CLI_DEFAULTS } from "../constants.js";
import { cliName } from "./cli-name.js";

/** Flags of `devmind approve` / `devmind reject`. */
export interface DecideOptions {
  call?: string;
  args?: string;
  reason?: string;
  by?: string;
  detach?: boolean;
  json?: boolean;
  verbose?: boolean;
  /** `--config`: the LangGraph config file naming the project's graphs. */
  config?: string;
}

/**
 * Decides the waiting calls of a run — the one named by `--call`, else every undecided one —
 * and, unless `--detach`, continues the run in this process. Everything is checked before
 * anything is stored: a bad `--args`, an unknown run or call, a run that is not waiting is a
 * one-line error and exit 2 with the database unchanged. Returns the exit code.
 */
export async function decideAndContinue(kind: "approve" | "reject", runId: string, options: DecideOptions, command: Command): Promise<number> {
  const editedArgs = options.args === undefined ? undefined : parseArgs(options.args, command);
  checkRunId(runId);
  const detach = options.detach === true;
  // the run is checked first: a finished or unknown run is the answer, whatever the model config
  const project = await loadProjectGraphs(options.config);
  const opened = await openRuntimeOrServer({ recoverOrphans: true, graphs: project.graphs });
  let release = (): void => undefined;
  try {
    const { runtime } = opened;
    const run = await runtime.runs.get(runId);
    if (!run.waiting) {
      const why = run.stop_reason === "interrupt" ? "its thread no longer waits on it (it was resumed, or a newer run started)" : `status ${run.status}`;
      throw new RunConflictError(`run ${runId} is not waiting for approval (${why})`, { runId, status: run.status });
    }
    const open = await openRequests(opened, runId);
    if (open.length === 0) throwIfPlainInterrupt(kind, run);
    const targets = options.call === undefined ? open : open.filter((request) => request.tool_call_id === options.call);
    if (options.call !== undefined && targets.length === 0) {
      throw new RunConflictError(`no undecided call ${JSON.stringify(options.call)} on run ${runId}; waiting: ${open.map((r) => r.tool_call_id).join(", ") || "none"}`, { runId });
    }
    if (targets.length === 0) throw new RunConflictError(`run ${runId} has no undecided call`, { runId });
    if (editedArgs !== undefined && targets.length !== 1) {
      command.error(`error: --args edits one call, but ${targets.length} are waiting; name it with --call (${targets.map((r) => r.tool_call_id).join(", ")})`, { exitCode: EXIT.usage });
    }
    // continuing here: the run's graph must be able to execute (the agent: its model builds)
    if (!detach) await runtime.graphs.ready(run.graph_id);
    const principal = options.by ?? defaultPrincipal();
    const decisions = targets.map((request): Decision =>
      kind === "reject"
        ? { type: "reject", tool_call_id: request.tool_call_id, ...(options.reason === undefined ? {} : { message: options.reason }) }
        : editedArgs !== undefined
          ? { type: "edit", tool_call_id: request.tool_call_id, editedAction: { name: request.name, args: editedArgs } }
          : { type: "approve", tool_call_id: request.tool_call_id },
    );
    // once every call is decided, a new run resumes the thread (CONTRACT section 3): claimed here unless --detach
    const after = await runtime.runs.decide(runId, { decisions }, { principal, ...(options.reason === undefined ? {} : { reason: options.reason }) }, { executeHere: !detach });
    // continuing here: from now on a closed stdout does not end the process (closed-output.ts)
    if (!detach) release = holdRunWhenOutputCloses(after.run_id);
    if (options.json !== true) {
      const verb = kind === "reject" ? "rejected" : editedArgs !== undefined ? "edited and approved" : "approved";
      for (const request of targets) writeStdout(`${verb} ${request.name}(${foldArgs(editedArgs ?? request.args, CLI_DEFAULTS.foldedArgsChars)}) by ${principal}\n`);
    }
    const resumed = after.run_id !== runId;
    if (detach || !resumed) {
      if (options.json === true) {
        for await (const event of runtime.runs.events(after.run_id)) process.stdout.write(`${JSON.stringify(event)}\n`);
        process.stdout.write(`${JSON.stringify(await resultLine(runtime, after))}\n`);
      } else if (resumed) {
        process.stdout.write(`run ${after.run_id} resumes the thread; it is queued and a worker continues it (or \`${cliName()} resume ${after.run_id}\`)\n`);
      }
      if (!resumed) {
        // some calls are still undecided: the thread waits on this run
        await printContinue(opened, after, options.json === true);
        return EXIT.awaitingApproval;
      }
      return EXIT.success;
    }
    return await driveRun(opened, after.run_id, driveOptionsFrom(options, principal, `run ${after.run_id} continues the thread of run ${runId} ${executedWhere(opened)}`));
  } finally {
    release();
    await opened.close();
  }
}

/**
 * A run waiting at a plain `interrupt(value)` (not LangChain's HITL request shape) has no call to
 * approve or reject: it is answered with a value. The error says so and names the command.
 */
function throwIfPlainInterrupt(kind: "approve" | "reject", run: RunRecord): void {
  const plain = (run.interrupts ?? []).filter((item) => !isHitlRequest(item.value));
  if (plain.length === 0) return;
  const first = plain[0] as RunInterrupt;
  const several = plain.length > 1 ? ` (${plain.length} interrupts: add --interrupt ID for each; ids: ${plain.map((item) => item.id).join(", ")})` : "";
  throw new RunConflictError(
    `run ${run.run_id} waits at an interrupt() that is not an approval request, so there is nothing to ${kind}: ` +
      `answer it with \`${cliName()} resume ${run.run_id} --value JSON\`${several}; it asks: ${foldArgs(first.value, CLI_DEFAULTS.foldedArgsChars)}`,
    { runId: run.run_id, status: run.status },
  );
}

function parseArgs(text: string, command: Command): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    command.error(`error: --args is not valid JSON: ${(error as Error).message}`, { exitCode: EXIT.usage });
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) command.error("error: --args must be a JSON object", { exitCode: EXIT.usage });
  return value as Record<string, unknown>;
}
