import { withoutAnsi } from "./server-log.js";

/**
 * Reads vitest's `--reporter=json` output (the Jest-compatible shape) into the few numbers and
 * lines a conformance run reports. Pure: the caller reads the file.
 */

/** One test as the json reporter writes it (only the fields read here). */
interface JsonAssertion {
  ancestorTitles?: string[];
  title?: string;
  fullName?: string;
  status?: string;
  duration?: number;
  failureMessages?: string[];
}

/** One test file as the json reporter writes it (only the fields read here). */
interface JsonFileResult {
  name?: string;
  status?: string;
  message?: string;
  assertionResults?: JsonAssertion[];
}

/** A failing test (or a file that failed outside its tests, e.g. in beforeAll or at import). */
export interface FailedTest {
  /** "describe > ... > title", or "(file) NAME" for a file-level failure. */
  name: string;
  /** The whole first failure message. */
  message: string;
  /** How long the test ran (ms), when the report says; a timeout shows here. */
  durationMs: number | null;
}

/** The counts and failures of one vitest run. */
export interface ConformanceSummary {
  passed: number;
  failed: number;
  /** Skipped, pending and todo tests. */
  skipped: number;
  total: number;
  /** Tests that failed, in report order, then files that failed outside any test. */
  failures: FailedTest[];
}

/** Thrown when the text is not a vitest json report. */
export class VitestReportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "VitestReportError";
  }
}

/**
 * Summarizes a vitest json report. Counts come from the tests' own statuses (not the top-level
 * totals, which count a test skipped by `.skip` and by a filter alike). A file whose status is
 * failed but that carries a message (a hook or import error) adds a file-level failure, so a run
 * where nothing could start is never reported as "0 failed".
 */
export function summarizeVitestReport(reportText: string): ConformanceSummary {
  let parsed: unknown;
  try {
    parsed = JSON.parse(reportText);
  } catch (error) {
    throw new VitestReportError(`the vitest report is not JSON: ${(error as Error).message}`);
  }
  const files = (parsed as { testResults?: unknown }).testResults;
  if (!Array.isArray(files)) throw new VitestReportError("the vitest report has no testResults array");
  const summary: ConformanceSummary = { passed: 0, failed: 0, skipped: 0, total: 0, failures: [] };
  const fileFailures: FailedTest[] = [];
  for (const file of files as JsonFileResult[]) {
    for (const test of file.assertionResults ?? []) {
      summary.total += 1;
      if (test.status === "passed") summary.passed += 1;
      else if (test.status === "failed") {
        summary.failed += 1;
        summary.failures.push({ name: testName(test), message: failureMessage(test), durationMs: test.duration ?? null });
      } else summary.skipped += 1;
    }
    if (file.status === "failed" && file.message !== undefined && file.message.trim() !== "") {
      fileFailures.push({ name: `(file) ${file.name ?? "?"}`, message: file.message, durationMs: null });
    }
  }
  summary.failures.push(...fileFailures);
  return summary;
}

/** vitest's json reporter writes a timeout as this bare placeholder stack, without "Test timed out". */
const TIMEOUT_PLACEHOLDER = "Error: STACK_TRACE_ERROR";

/** The first failure message; the json reporter's timeout placeholder is named as what it means. */
function failureMessage(test: JsonAssertion): string {
  const message = test.failureMessages?.[0] ?? "(no failure message)";
  if (!message.startsWith(TIMEOUT_PLACEHOLDER)) return message;
  return `Error: probably a test timeout (vitest's json report keeps only ${TIMEOUT_PLACEHOLDER}; see the vitest output)\n${message}`;
}

/** "describe > nested > title": the ancestors and title joined, else the reporter's fullName. */
function testName(test: JsonAssertion): string {
  const parts = [...(test.ancestorTitles ?? []), ...(test.title === undefined ? [] : [test.title])];
  return parts.length > 0 ? parts.join(" > ") : (test.fullName ?? "(unnamed test)");
}

/** The first `count` non-empty lines of a failure message, trimmed, ANSI colours removed. */
export function firstLines(message: string, count: number): string[] {
  return withoutAnsi(message)
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .slice(0, count);
}

/**
 * The printable summary: one counts line ("N passed, N failed, N skipped (of T)"), then each
 * failure's name and the first `errorLines` lines of its error, indented.
 */
export function formatSummary(summary: ConformanceSummary, errorLines: number): string {
  const out = [`${summary.passed} passed, ${summary.failed} failed, ${summary.skipped} skipped (of ${summary.total} tests)`];
  if (summary.failures.length > 0) out.push("", "Failing:");
  for (const failure of summary.failures) {
    out.push(`- ${failure.name}${failure.durationMs === null ? "" : ` (${(failure.durationMs / 1000).toFixed(1)} s)`}`);
    for (const line of firstLines(failure.message, errorLines)) out.push(`    ${line}`);
  }
  return out.join("\n");
}
