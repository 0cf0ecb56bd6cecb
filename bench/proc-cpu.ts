import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU time of processes on this machine, read from Linux's /proc (user + system time). The server
 * bench uses it to say what one run costs each process (the server, PostgreSQL's backends, the SDK
 * client), which decides how many runs a second fit on the machine's cores. Elsewhere than Linux
 * every reading is `undefined` and the bench prints "-".
 */

/** Clock ticks a second of /proc's time fields (getconf CLK_TCK; 100 on Linux in practice). */
let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** The fields of /proc/PID/stat after the command name: [0] state, [1] ppid, [2] pgrp, ... [11] utime, [12] stime, [13] cutime, [14] cstime. */
function statFields(pid: string): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined; // the process has exited since the listing
  }
}

function hasProc(): boolean {
  return process.platform === "linux";
}

/**
 * CPU milliseconds used so far by the process group `pgid` (a server started as a group leader):
 * every live member's own time, plus the leader's reaped children. `undefined` off Linux.
 */
export function groupCpuMs(pgid: number): number | undefined {
  if (!hasProc()) return undefined;
  let ticks = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const fields = statFields(pid);
    if (fields === undefined || Number(fields[2]) !== pgid) continue;
    ticks += Number(fields[11]) + Number(fields[12]);
    if (Number(pid) === pgid) ticks += Number(fields[13]) + Number(fields[14]);
  }
  return (ticks * 1000) / clockTicks();
}

/**
 * CPU milliseconds used so far by each of `pids` (PostgreSQL backends, named by pg_stat_activity),
 * keyed by pid; a pid that is gone is left out. `undefined` off Linux.
 */
export function pidsCpuMs(pids: readonly number[]): Map<number, number> | undefined {
  if (!hasProc()) return undefined;
  const out = new Map<number, number>();
  for (const pid of pids) {
    const fields = statFields(String(pid));
    if (fields !== undefined) out.set(pid, ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks());
  }
  return out;
}

/**
 * What the backends in `after` used since `before`: a backend seen only after counts from zero (it
 * started within the interval, its start-up included); one gone by `after` is lost (its time is
 * not readable any more), which undercounts, never overcounts.
 */
export function backendsCpuDeltaMs(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number {
  let sum = 0;
  for (const [pid, ms] of after) sum += ms - (before.get(pid) ?? 0);
  return sum;
}

/** CPU milliseconds this process has used so far (user + system). */
export function ownCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}
