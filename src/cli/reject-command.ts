import type { Command } from "commander";
import { decideAndContinue, type DecideOptions } from "./decide-session.js";

/**
 * Registers `devmind reject RUN_ID [--call ID] [--reason TEXT] [--by NAME] [--detach] [--json]`.
 * The model receives APPROVAL_REJECTED with the reason, and the run continues.
 */
export function registerRejectCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("reject")
    .description("reject the calls a run waits on (or one with --call), then continue the run here")
    .argument("<run_id>", "the waiting run")
    .option("--call <tool_call_id>", "decide only this call (default: every undecided call)")
    .option("--reason <text>", "why; the model is told")
    .option("--by <name>", "who decides (default cli:<login>)")
    .option("--detach", "only record the decision; a worker continues the run")
    .option("--config <path>", "the LangGraph config file (default ./langgraph.json)")
    .option("--json", "print NDJSON: every run event, then a result line")
    .option("--verbose", "show full tool arguments, model usage, workers")
    .action(async (runId: string, options: DecideOptions, command: Command) => {
      setExitCode(await decideAndContinue("reject", runId, options, command));
    });
}
