import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CONFORMANCE } from "./conformance-constants.js";
import { runBounded } from "./processes.js";
import { type ConformanceSummary, summarizeVitestReport } from "./vitest-report.js";
import { cleanEnv } from "./workspace.js";

/** What one vitest run of an official test file gave. */
export interface VitestOutcome {
  summary: ConformanceSummary | null;
  /** Why there is no summary (timeout, no report), or null. */
  problem: string | null;
  seconds: number;
  /** vitest's console output (default reporter). */
  output: string;
}

/**
 * `vitest run TEST_FILE` (relative to `dir`) in `dir` with the default reporter (to the returned output)
 * and the json reporter (to `reportFile`), bounded by CONFORMANCE.vitestTimeoutMs. CI is unset:
 * with it, the test file would start its own server on its own port.
 */
export async function runOfficialTests(dir: string, testFile: string, reportFile: string): Promise<VitestOutcome> {
  const started = Date.now();
  const vitest = join(dir, "node_modules", ".bin", "vitest");
  const result = await runBounded(
    vitest,
    ["run", testFile, "--reporter=default", "--reporter=json", `--outputFile.json=${reportFile}`],
    { cwd: dir, env: cleanEnv({ CI: undefined, FORCE_COLOR: undefined, NO_COLOR: "1" }), timeoutMs: CONFORMANCE.vitestTimeoutMs },
  );
  const seconds = (Date.now() - started) / 1000;
  if (result.timedOut) return { summary: null, problem: `vitest did not finish within ${CONFORMANCE.vitestTimeoutMs / 60_000} min (stopped)`, seconds, output: result.output };
  if (!existsSync(reportFile)) return { summary: null, problem: `vitest exited ${result.code ?? result.signal} without writing ${reportFile}`, seconds, output: result.output };
  try {
    return { summary: summarizeVitestReport(readFileSync(reportFile, "utf8")), problem: null, seconds, output: result.output };
  } catch (error) {
    return { summary: null, problem: (error as Error).message, seconds, output: result.output };
  }
}
