import type { Command } from "commander";
import { CLI_DEFAULTS } from "../constants.js";
import { hasErrorCode } from "../errors.js";
import { checkRunId, type RunRecord, type RunStatus } from "../runtime/queue/run-record.js";
import type { Runtime } from "../runtime/runtime.js";
import type { OutputOptions } from "./cli-options.js";
import { EXIT } from "./exit-codes.js";
import { openRuntimeOrServer } from "./remote/local-server.js";
import { resultLine } from "./run-session.js";

const FINISHED: readonly RunStatus[] = ["success", "error", "timeout", "interrupted"];

/**
 * Registers `devmind cancel RUN_ID`: a queued or waiting run is cancelled at once; a running one
 * is asked to stop (its worker stops at the next check; a dead worker's run ends once its lease
 * lapses, at once on the embedded database; this command waits up to CLI_DEFAULTS.cancelWaitMs). Exit 0 when the run is cancelled, the cancel is under way, or
 * the run had already finished (said so, nothing changed); exit 2 for an unknown run.
 */
export function registerCancelCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("cancel")
    .description("cancel a run (queued, waiting for approval, or running anywhere)")
    .argument("<run_id>", "the run")
    .option("--json", "print the result line as JSON")
    .action(async (runId: string, options: OutputOptions) => {
      checkRunId(runId);
      const opened = await openRuntimeOrServer({ callsNoModel: true });
      try {
        const { runtime } = opened;
        const before = await runtime.runs.get(runId);
        if (FINISHED.includes(before.status)) {
          // nothing to cancel is not a failure: the run is already where a cancel would take it
          if (options.json === true) process.stdout.write(`${JSON.stringify(await resultLine(opened.runtime, before))}\n`);
          else process.stdout.write(`run ${runId} already finished (${before.status}); nothing to cancel\n`);
          setExitCode(EXIT.success);
          return;
        }
        let run = await cancelOrRequested(runtime, runId);
        if (run.status === "running") {
          run = await runtime.runs.waitStopped(runId, { timeoutMs: CLI_DEFAULTS.cancelWaitMs });
        }
        if (options.json === true) process.stdout.write(`${JSON.stringify(await resultLine(opened.runtime, run))}\n`);
        else if (run.status === "interrupted") process.stdout.write(`run ${runId} cancelled\n`);
        else if (run.status === "running") process.stdout.write(`cancel requested: run ${runId} stops at its worker's next check\n`);
        else process.stdout.write(`run ${runId} ended ${run.status} before the cancel took effect\n`);
        setExitCode(EXIT.success);
      } finally {
        await opened.close();
      }
    });
}

/**
 * Requests the cancel; a running run whose cancel was already requested (a second Ctrl-C forced
 * its process out before it stopped) is returned as it is, so the caller still waits for it to
 * end — as the reaper ends a dead worker's run — instead of refusing.
 */
async function cancelOrRequested(runtime: Runtime, runId: string): Promise<RunRecord> {
  try {
    return await runtime.runs.cancel(runId);
  } catch (error) {
    if (!hasErrorCode(error, "RUN_CONFLICT")) throw error;
    const run = await runtime.runs.get(runId);
    if (run.status !== "running") throw error;
    return run;
  }
}
