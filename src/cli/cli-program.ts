/**
 * The `devmind` command line. Commands are registered by their own modules; this file only
 * wires them, turns errors into exit codes (CONTRACT section 7) and exits. Started by ./main.ts,
 * from the one-file bundle of this module when no project graphs can load (see cli-entry.ts).
 */
import { CommanderError } from "commander";
import { configSecrets, loadConfig } from "../config.js";
import { createRedactor, redactText } from "../secret-redaction.js";
import { buildProgram } from "./cli-commands.js";
import { exitQuietlyWhenOutputCloses } from "./closed-output.js";
import { EXIT, reportError } from "./exit-codes.js";

async function main(argv: string[]): Promise<number> {
  let exitCode: number = EXIT.success;
  const program = buildProgram((code) => {
    exitCode = code;
  });
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
