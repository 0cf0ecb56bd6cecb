import type { Command } from "commander";
import { decideAndContinue, type DecideOptions } from "./decide-session.js";

/** Registers `devmind approve RUN_ID [--call ID] [--args JSON] [--reason TEXT] [--by NAME] [--detach] [--json]`. */
export function registerApproveCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("approve")
    .description("approve the calls a run waits on (or one with --call), then continue the run here")
    .argument("<run_id>", "the waiting run")
    .option("--call <tool_call_id>", "decide only this call (default: every undecided call)")
    .option("--args <json>", "run the call with these arguments instead (an edit; needs one call)")
    .option("--reason <text>", "why (stored with the decision)")
    .option("--by <name>", "who decides (default cli:<login>)")
    .option("--detach", "only record the decision; a worker continues the run")
    .option("--config <path>", "the LangGraph config file (default ./langgraph.json)")
    .option("--json", "print NDJSON: every run event, then a result line")
    .option("--verbose", "show full tool arguments, model usage, workers")
    .action(async (runId: string, options: DecideOptions, command: Command) => {
      setExitCode(await decideAndContinue("approve", runId, options, command));
    });
}
