import type { Command } from "commander";
import { ConfigError, hasErrorCode, RunConflictError, type DevmindError } from "../errors.js";
import { checkRunId } from "../runtime/queue/run-record.js";
import { defaultPrincipal, jsonOption, type OutputOptions } from "./cli-options.js";
import { exitForRun } from "./exit-codes.js";
import { loadProjectGraphs } from "./project-graphs.js";
import { openRuntimeOrServer } from "./remote/local-server.js";
import { executedWhere } from "./open-runtime.js";
import { cliName } from "./cli-name.js";
import { driveOptionsFrom, driveRun, resultLine } from "./run-session.js";

/**
 * Registers `devmind resume RUN_ID`: continues a run's thread in this process. A run that ended
 * at an interrupt: with `--value`, the value is recorded and a new run resumes the thread
 * (CONTRACT section 3); at a breakpoint, a new run continues from it; at an approval, it is
 * asked on a terminal (else exit 3). A run still queued, or whose process died (`running` with
 * nobody behind it: taken over at once on the embedded database, after its lease lapses on
 * PostgreSQL), continues from its last checkpoint. A finished run is exit 2, unchanged.
 */
export function registerResumeCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("resume")
    .description("continue a run in this process from its last checkpoint (after a crash, a detach, or a decision)")
    .argument("<run_id>", "the run")
    .option("--json", "print NDJSON: every run event, then a result line")
    .option("--verbose", "show full tool arguments, model usage, workers")
    .option("--by <name>", "who approves at the prompt, or gives --value (recorded with it)")
    .option("--value <json>", "answer the run's interrupt with this JSON value (or @FILE); for a graph's interrupt() that is not an approval")
    .option("--interrupt <id>", "with --value: answer this interrupt (when several wait)")
    .option("--reason <text>", "why (stored with the --value)")
    .option("--detach", "with --value: only record it; a worker continues the run")
    .option("--config <path>", "the LangGraph config file (default ./langgraph.json)")
    .action(async (runId: string, options: OutputOptions & { by?: string; value?: string; interrupt?: string; reason?: string; detach?: boolean; config?: string }) => {
      checkRunId(runId);
      if (options.interrupt !== undefined && options.value === undefined) throw new ConfigError("--interrupt needs --value", { variables: ["--interrupt"] });
      const given = options.value === undefined ? undefined : jsonOption("--value", options.value);
      const value = given === undefined ? undefined : options.interrupt === undefined ? { value: given } : { values: { [options.interrupt]: given } };
      const project = await loadProjectGraphs(options.config);
      const opened = await openRuntimeOrServer({ recoverOrphans: true, graphs: project.graphs });
      try {
        let found = await opened.runtime.runs.get(runId);
        const principal = options.by ?? defaultPrincipal();
        const audit = { principal, ...(options.reason === undefined ? {} : { reason: options.reason }) };
        if (!found.waiting && found.status !== "pending" && found.status !== "running") {
          const why = found.stop_reason === "interrupt" ? "its thread no longer waits on it (it was resumed, or a newer run started)" : `it already finished with status ${found.status}`;
          throw new RunConflictError(`run ${runId} cannot be resumed: ${why}`, { runId, status: found.status });
        }
        if (found.waiting && (value !== undefined || (found.interrupts ?? []).length === 0)) {
          if (options.detach !== true) await opened.runtime.graphs.ready(found.graph_id);
          const next = { executeHere: options.detach !== true };
          // a value answers its interrupts; a breakpoint is continued by a run without input
          found =
            value !== undefined
              ? await opened.runtime.runs.resume(runId, value, audit, next)
              : await opened.runtime.runs.create({ threadId: found.thread_id, assistantId: found.assistant_id, input: null, config: found.config, ...next });
          if (options.detach === true || found.run_id === runId) {
            process.stdout.write(`${options.json === true ? JSON.stringify(await resultLine(opened.runtime, found)) : found.run_id === runId ? `run ${runId}: its thread still waits for a value` : `run ${found.run_id} resumes the thread; it is ${found.status}`}\n`);
            setExitCode(exitForRun(found));
            return;
          }
          setExitCode(await driveRun(opened, found.run_id, driveOptionsFrom(options, principal, `run ${found.run_id} continues the thread of run ${runId} ${executedWhere(opened)}`)));
          return;
        }
        await opened.runtime.graphs.ready(found.graph_id);
        const run = await opened.runtime.runs
          .takeOver(runId, { onWait: (until) => process.stderr.write(`run ${runId} is still leased by its previous process until ${until}; waiting for the lease to lapse…\n`) })
          .catch((error: unknown) => {
            throw found.status === "running" && hasErrorCode(error, "RUN_CONFLICT") ? heldElsewhere(runId, error) : error;
          });
        setExitCode(
          await driveRun(opened, run.run_id, driveOptionsFrom(options, principal, `resuming run ${run.run_id} (${run.status}) ${executedWhere(opened)}`)),
        );
      } finally {
        await opened.close();
      }
    });
}

/** The runtime's "held by a live process" conflict, saying which commands follow or stop the run. */
function heldElsewhere(runId: string, error: DevmindError): RunConflictError {
  const owner = error.details["owner"];
  const until = error.details["leaseExpiresAt"];
  const holder = typeof owner === "string" ? `${owner} (lease until ${String(until)})` : "another process";
  return new RunConflictError(
    `run ${runId} is running in ${holder}; follow it with \`${cliName()} events ${runId} --follow\`, or cancel it with \`${cliName()} cancel ${runId}\``,
    { runId, status: "running" },
  );
}
