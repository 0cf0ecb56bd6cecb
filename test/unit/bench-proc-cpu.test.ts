import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { backendsCpuDeltaMs, groupCpuMs, ownCpuMs, pidsCpuMs } from "../../bench/proc-cpu.js";

// a child that spins until it has used 300 ms of CPU (not of wall time: a loaded machine only
// makes it take longer), says so, and waits for its stdin to close
const SPINNER = `
const until = 300;
const used = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
while (used() < until) {}
process.stdout.write("spun\\n");
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
`;

describe.runIf(process.platform === "linux")("proc-cpu (npm run bench -- server: CPU per run from /proc)", () => {
  it("counts a process group's CPU: a detached child that spun 300 ms of CPU", async () => {
    const child = spawn(process.execPath, ["-e", SPINNER], { detached: true, stdio: ["pipe", "pipe", "inherit"] });
    try {
      await once(child.stdout, "data");
      const pid = child.pid as number;
      // the process read by pid alone, then its group: the group, read later, holds at least as
      // much (the child still uses a little CPU after it spun: the write, its event loop)
      const own = pidsCpuMs([pid])?.get(pid) as number;
      const group = groupCpuMs(pid) as number;
      expect(own).toBeGreaterThanOrEqual(250);
      expect(group).toBeGreaterThanOrEqual(own);
      // a group nobody leads: nothing
      expect(groupCpuMs(2 ** 22 + 12345)).toBe(0);
    } finally {
      child.stdin?.end();
      if (child.exitCode === null) await once(child, "exit");
    }
  });

  it("leaves out pids that are gone, and counts backends new since the first reading from zero", () => {
    const read = pidsCpuMs([process.pid, 2 ** 22 + 54321]) as Map<number, number>;
    expect([...read.keys()]).toEqual([process.pid]);
    expect(backendsCpuDeltaMs(new Map([[1, 10], [2, 5]]), new Map([[1, 25], [3, 7]]))).toBe(15 + 7);
    expect(ownCpuMs()).toBeGreaterThan(0);
  });
});
