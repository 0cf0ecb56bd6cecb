import { EventEmitter } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";

type ClosedOutput = typeof import("../../src/cli/closed-output.js");

/** A fresh copy of the module (its state is per process) and two fake output streams. */
async function setup(): Promise<{ module: ClosedOutput; stdout: EventEmitter; stderr: EventEmitter & { lines: string[] }; exits: number[] }> {
  vi.resetModules();
  const module = await import("../../src/cli/closed-output.js");
  const stdout = new EventEmitter();
  const stderr = Object.assign(new EventEmitter(), { lines: [] as string[] });
  const exits: number[] = [];
  vi.spyOn(process, "exit").mockImplementation(((code?: number) => {
    exits.push(code ?? 0);
  }) as typeof process.exit);
  vi.spyOn(process.stderr, "write").mockImplementation(((text: string) => {
    stderr.lines.push(text);
    return true;
  }) as typeof process.stderr.write);
  module.exitQuietlyWhenOutputCloses({ stdout: stdout as NodeJS.WriteStream, stderr: stderr as unknown as NodeJS.WriteStream });
  return { module, stdout, stderr, exits };
}

const epipe = (): NodeJS.ErrnoException => Object.assign(new Error("write EPIPE"), { code: "EPIPE" });

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a closed stdout", () => {
  it("ends a command that only prints at once, with exit 0", async () => {
    const { stdout, exits } = await setup();
    stdout.emit("error", epipe());
    expect(exits).toEqual([0]);
  });

  it("never ends a command that executes a run: the run goes on, one note names it, later writes are dropped", async () => {
    const { module, stdout, stderr, exits } = await setup();
    const release = module.holdRunWhenOutputCloses("run-1");
    stdout.emit("error", epipe());
    stdout.emit("error", Object.assign(new Error("destroyed"), { code: "ERR_STREAM_DESTROYED" }));
    expect(exits).toEqual([]);
    expect(module.stdoutClosed()).toBe(true);
    expect(stderr.lines).toEqual(["devmind: output closed; run run-1 continues in this process to its next stop (the exit code is its status's; Ctrl-C cancels it)\n"]);
    // after the run stopped, a late report of the closed pipe still leaves the ending to the command
    release();
    stdout.emit("error", epipe());
    expect(exits).toEqual([]);
  });

  it("rethrows any other error of the stream", async () => {
    const { stdout } = await setup();
    expect(() => stdout.emit("error", Object.assign(new Error("disk"), { code: "EIO" }))).toThrow("disk");
  });
});
