/**
 * Per-file CPU accounting, on when DEVMIND_TEST_CPU_LOG names a file: after each test file, one
 * JSON line with the CPU seconds its worker spent on it (user+system) and those of the children
 * it started and reaped (a worker runs one file at a time, so the difference of the worker's
 * counters across the file is the file's). On a CPU-bound machine these, not the wall times, say
 * where the suite's time goes; `.ci/run` prints the table.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { afterAll, expect } from "vitest";

const LOG = process.env["DEVMIND_TEST_CPU_LOG"];

/** utime, stime, cutime, cstime of this process in clock ticks (100 per second on Linux). */
function ticks(): number[] {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields from the state (3rd of /proc/pid/stat): utime is the 14th, so index 11 here
  return [11, 12, 13, 14].map((index) => Number(fields[index]));
}

if (LOG !== undefined && LOG !== "") {
  // from here, before the file's own module is evaluated (setup files run before each file)
  const start = ticks();
  const started = Date.now();
  afterAll(() => {
    const [user, system, childUser, childSystem] = ticks().map((value, index) => (value - (start[index] ?? 0)) / 100) as [number, number, number, number];
    const line = { file: expect.getState().testPath ?? "", self: +(user + system).toFixed(2), children: +(childUser + childSystem).toFixed(2), wall: (Date.now() - started) / 1000 };
    appendFileSync(LOG, `${JSON.stringify(line)}\n`);
  });
}
