#!/usr/bin/env node
/**
 * The `devmind` command line. Commands are registered by their own modules; this file only
 * wires them, turns errors into exit codes (CONTRACT section 7) and exits.
 */
import { Command, CommanderError } from "commander";
import { EXIT, reportError } from "./exit-codes.js";
import { registerMigrateCommand } from "./migrate-command.js";

async function main(argv: string[]): Promise<number> {
  let exitCode: number = EXIT.success;
  const program = new Command("devmind")
    .description("durable agent runtime: LangGraph graphs checkpointed in PostgreSQL")
    .exitOverride()
    .showHelpAfterError();
  registerMigrateCommand(program, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? EXIT.success : EXIT.usage;
    }
    return reportError(error);
  }
  return exitCode;
}

main(process.argv).then(
  (code) => process.exit(code),
  (error: unknown) => process.exit(reportError(error)),
);
