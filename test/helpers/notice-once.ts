import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import { inject } from "vitest";

/**
 * Prints `text` on stderr once per `vitest run`, whichever test process imports it first: the
 * run's folder (made by the global setup) holds a marker named `key` that the first one creates.
 * Without a global setup (no run folder) every process prints it.
 */
export function noticeOnce(key: string, text: string): void {
  let runDir: string | undefined;
  try {
    runDir = inject("testRunDir");
  } catch {
    runDir = undefined;
  }
  if (runDir !== undefined) {
    try {
      closeSync(openSync(join(runDir, `notice-${key}`), "wx"));
    } catch {
      return;
    }
  }
  console.warn(text);
}
