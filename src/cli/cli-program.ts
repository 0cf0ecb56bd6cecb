/**
 * The `devmind` command line. Commands are registered by their own modules; this file only
 * wires them, turns errors into exit codes (CONTRACT section 7) and exits. Started by ./main.ts,
 * from the one-file bundle of this module when no project graphs can load (see cli-entry.ts).
 */
import { Command, CommanderError } from "commander";
import { configSecrets, loadConfig } from "../config.js";
import { createRedactor, redactText } from "../secret-redaction.js";
import { packageVersion } from "../version.js";
import { registerApproveCommand } from "./approve-command.js";
import { registerCancelCommand } from "./cancel-command.js";
import { registerCronsCommand } from "./crons-command.js";
import { registerDemoCommand } from "./demo-command.js";
import { registerDockerfileCommands } from "./dockerfile-command.js";
import { registerEventsCommand } from "./events-command.js";
import { registerGraphsCommand } from "./graphs-command.js";
import { exitQuietlyWhenOutputCloses } from "./closed-output.js";
import { EXIT, reportError } from "./exit-codes.js";
import { registerMigrateCommand } from "./migrate-command.js";
import { registerRejectCommand } from "./reject-command.js";
import { registerResumeCommand } from "./resume-command.js";
import { registerRunCommand } from "./run-command.js";
import { registerRunsCommand } from "./runs-command.js";
import { registerServeCommand } from "./serve-command.js";
import { registerShowCommand } from "./show-command.js";
import { registerWorkerCommand } from "./worker-command.js";

async function main(argv: string[]): Promise<number> {
  let exitCode: number = EXIT.success;
  const program = new Command("devmind")
    .description("durable agent runtime: LangGraph graphs checkpointed in PostgreSQL")
    .version(packageVersion(), "-V, --version", "print the devmind version")
    .exitOverride()
    .showHelpAfterError("(add --help for usage)");
  const setExitCode = (code: number): void => {
    exitCode = code;
  };
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
  registerGraphsCommand(program, setExitCode);
  registerCronsCommand(program, setExitCode);
  registerDockerfileCommands(program, setExitCode);
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? EXIT.success : EXIT.usage;
    }
    return reportError(error, undefined, processRedactor());
  }
  return exitCode;
}

/**
 * The redactor for errors this process prints: the configured secret values when the config
 * loads (it may be the bad config being reported), else the secret patterns alone.
 */
function processRedactor(): (text: string) => string {
  try {
    return createRedactor(configSecrets(loadConfig())).text;
  } catch {
    return redactText;
  }
}

exitQuietlyWhenOutputCloses();
main(process.argv).then(
  (code) => process.exit(code),
  (error: unknown) => process.exit(reportError(error, undefined, processRedactor())),
);
