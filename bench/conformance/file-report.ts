import type { VitestOutcome } from "./run-vitest.js";
import { formatSummary } from "./vitest-report.js";

/** What one official file gave: its vitest outcome, or why it never ran (the server did not start, ...). */
export interface FileResult {
  /** The file's OFFICIAL_FILES name. */
  name: string;
  /** Its path under the temp dir (tests/...). */
  testFile: string;
  outcome: VitestOutcome | null;
  /** Why there is no outcome (null when vitest ran). */
  notRun: string | null;
  /** The server log's 5xx / request.failed lines during this file. */
  serverErrors: string[];
}

/** True when the file ran and every test passed (and no file-level failure). */
export function filePassed(result: FileResult): boolean {
  const summary = result.outcome?.summary;
  return summary !== null && summary !== undefined && summary.failed === 0 && summary.failures.length === 0;
}

/** One line per file: `FILE  P of N passed (F failed; S skipped)` (N: the tests not skipped), or why it has no counts. */
export function formatCountsTable(results: readonly FileResult[]): string {
  const width = Math.max(...results.map((result) => result.testFile.length));
  return results
    .map((result) => {
      const label = result.testFile.padEnd(width);
      if (result.notRun !== null) return `${label}  NOT RUN: ${firstLine(result.notRun)}`;
      const summary = result.outcome?.summary;
      if (summary === null || summary === undefined) return `${label}  NO RESULT: ${firstLine(result.outcome?.problem ?? "no report")}`;
      const fileFailures = summary.failures.length - summary.failed;
      const skipped = summary.skipped > 0 ? `; ${summary.skipped} skipped` : "";
      const fileLevel = fileFailures > 0 ? `; ${fileFailures} file-level failure${fileFailures === 1 ? "" : "s"}` : "";
      return `${label}  ${summary.passed} of ${summary.total - summary.skipped} passed (${summary.failed} failed${skipped}${fileLevel})`;
    })
    .join("\n");
}

/** Each file's section: its counts line and failures (formatSummary), its server log's error count. */
export function formatFileSections(results: readonly FileResult[], errorLines: number): string {
  return results
    .map((result) => {
      const body =
        result.notRun !== null
          ? `NOT RUN: ${result.notRun}`
          : result.outcome?.summary === null || result.outcome === null
            ? `NO RESULT: ${result.outcome?.problem ?? "no report"}`
            : formatSummary(result.outcome.summary, errorLines);
      const errors = `server log: ${result.serverErrors.length} 5xx / request.failed line${result.serverErrors.length === 1 ? "" : "s"}`;
      return [`== ${result.testFile}`, body, errors].join("\n");
    })
    .join("\n\n");
}

function firstLine(text: string): string {
  return (text.split("\n")[0] ?? "").slice(0, 300);
}
