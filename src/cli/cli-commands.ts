import { Command } from "commander";
import { packageVersion } from "../version.js";
import { registerApproveCommand } from "./approve-command.js";
import { registerCancelCommand } from "./cancel-command.js";
import { registerCronsCommand } from "./crons-command.js";
import { registerDemoCommand } from "./demo-command.js";
import { registerDockerfileCommands } from "./dockerfile-command.js";
import { registerEventsCommand } from "./events-command.js";
import { registerGraphsCommand } from "./graphs-command.js";
import { registerMigrateCommand } from "./migrate-command.js";
import { registerRejectCommand } from "./reject-command.js";
import { registerResumeCommand } from "./resume-command.js";
import { registerRunCommand } from "./run-command.js";
import { registerRunsCommand } from "./runs-command.js";
import { registerDevCommand, registerServeCommand } from "./serve-command.js";
import { registerShowCommand } from "./show-command.js";
import { registerWorkerCommand } from "./worker-command.js";

/**
 * The `devmind` command line with every command registered, not yet parsed: what
 * cli-program.ts runs, and what a test reads to check the flags the docs name. `setExitCode`
 * receives each command's exit code.
 */
export function buildProgram(setExitCode: (code: number) => void): Command {
  const program = new Command("devmind")
    .description("durable agent runtime: LangGraph graphs checkpointed in PostgreSQL")
    .version(packageVersion(), "-V, --version", "print the devmind version")
    .exitOverride()
    .showHelpAfterError("(add --help for usage)");
  registerRunCommand(program, setExitCode);
  registerApproveCommand(program, setExitCode);
  registerRejectCommand(program, setExitCode);
  registerResumeCommand(program, setExitCode);
  registerCancelCommand(program, setExitCode);
  registerRunsCommand(program, setExitCode);
  registerShowCommand(program, setExitCode);
  registerEventsCommand(program, setExitCode);
  registerWorkerCommand(program, setExitCode);
  registerDemoCommand(program, setExitCode);
  registerMigrateCommand(program, setExitCode);
  registerServeCommand(program, setExitCode);
  registerDevCommand(program, setExitCode);
  registerGraphsCommand(program, setExitCode);
  registerCronsCommand(program, setExitCode);
  registerDockerfileCommands(program, setExitCode);
  return program;
}
