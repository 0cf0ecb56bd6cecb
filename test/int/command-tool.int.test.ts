import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "@langchain/langgraph";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { COMMAND_LIMITS } from "../../src/constants.js";
import type { Database } from "../../src/db/types.js";
import { RunCancelledError } from "../../src/errors.js";
import { builtinTools } from "../../src/tools/builtin/index.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import type { ToolResult } from "../../src/tools/types.js";
import { ensureWorkspace } from "../../src/tools/workspace.js";
import { pairing, runAgent } from "../helpers/agent.js";
import { BACKENDS, freshMigratedSchema, itOnPrimary, openBackend } from "../helpers/databases.js";

interface CommandData {
  exit_code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timed_out: boolean;
  truncated: boolean;
}

let base: string;
let ws: string;
let registry: ToolRegistry;
let calls = 0;

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "devmind-cmd-")));
  ws = await ensureWorkspace(join(base, "workspace"));
  await mkdir(join(base, "outside"));
  registry = new ToolRegistry(builtinTools({ workspace: ws }), { workspace: ws, defaultTimeoutMs: 5_000, maxOutputChars: 12_000 });
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

function runCommand(args: Record<string, unknown>, options: { registry?: ToolRegistry; signal?: AbortSignal } = {}): Promise<ToolResult> {
  calls += 1;
  return (options.registry ?? registry).execute({ id: `cmd_${calls}`, name: "run_command", args }, options.signal === undefined ? {} : { signal: options.signal });
}

async function ok(args: Record<string, unknown>, reg?: ToolRegistry): Promise<CommandData> {
  const result = await runCommand(args, reg === undefined ? {} : { registry: reg });
  expect(result, JSON.stringify(result)).toMatchObject({ ok: true, error: null, truncated: false });
  return result.data as CommandData;
}

async function failed(args: Record<string, unknown>): Promise<{ code: string; message: string }> {
  const result = await runCommand(args);
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result)}`);
  return result.error;
}

/** Alive and not a zombie (an orphan may wait for a reaper that never comes in a container). */
function isAlive(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  return state !== "Z" && state !== "X";
}

async function waitFor(predicate: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function pids(...names: string[]): number[] {
  return names.map((name) => Number(readFileSync(join(ws, name), "utf8").trim()));
}

// a child shell and, below it, a grandchild sleep; both record their pids, then everyone waits
const FAMILY = "sh -c 'sleep 30 & echo $! > grandchild.pid; wait' & echo $! > child.pid; wait";

describe("run_command", () => {
  it("has the metadata of CONTRACT section 4 and needs approval by default", () => {
    const tool = registry.get("run_command");
    expect([tool?.sideEffect, tool?.approval, tool?.idempotent]).toEqual(["local", true, false]);
    expect(registry.check({ id: "c", name: "run_command", args: { command: "ls" } })).toMatchObject({ kind: "ready", needsApproval: true, risk: "medium" });
  });

  it("reports exit codes, stdout and stderr", async () => {
    expect(await ok({ command: "echo out; echo err >&2" })).toEqual({ exit_code: 0, signal: null, stdout: "out\n", stderr: "err\n", timed_out: false, truncated: false });
    expect(await ok({ command: "printf partial; exit 3" })).toEqual({ exit_code: 3, signal: null, stdout: "partial", stderr: "", timed_out: false, truncated: false });
    const missing = await ok({ command: "definitely-not-a-command-xyz" });
    expect(missing.exit_code).toBe(127);
    expect(missing.stderr).toContain("not found");
    // stdin is closed: a command reading it sees end of file instead of hanging
    expect(await ok({ command: "cat; echo after" })).toMatchObject({ exit_code: 0, stdout: "after\n" });
  });

  it("cuts long output to the call's limit, keeping head and tail, and says so", async () => {
    const data = await ok({ command: "i=0; while [ $i -lt 3000 ]; do echo line-$i; i=$((i+1)); done; echo tail-marker >&2" });
    expect(data.truncated).toBe(true);
    expect(data.stdout.startsWith("line-0\nline-1\n")).toBe(true);
    expect(data.stdout).toContain("line-2999\n");
    const full = Array.from({ length: 3000 }, (_, i) => `line-${i}\n`).join("");
    const [head, removed, tail] = data.stdout.split(/\n…\[truncated (\d+) chars\]…\n/) as [string, string, string];
    expect(head.length + Number(removed) + tail.length).toBe(full.length);
    expect(full.startsWith(head) && full.endsWith(tail)).toBe(true);
    expect(data.stderr).toBe("tail-marker\n");
    expect(JSON.stringify(data).length).toBeLessThanOrEqual(12_000);
  });

  it("captures at most the byte cap per stream and counts the rest", async () => {
    const total = COMMAND_LIMITS.outputMaxBytes + 100_000;
    const data = await ok({ command: `head -c ${total} /dev/zero | tr '\\0' a` });
    expect(data.exit_code).toBe(0);
    expect(data.truncated).toBe(true);
    expect(data.stdout).toContain("…[100000 more bytes not captured]");
    expect(JSON.stringify(data).length).toBeLessThanOrEqual(12_000);
  });

  it("runs in the workspace or a directory inside it, and refuses to leave it", async () => {
    expect((await ok({ command: "pwd" })).stdout).toBe(`${ws}\n`);
    await mkdir(join(ws, "sub"));
    expect((await ok({ command: "pwd", cwd: "sub" })).stdout).toBe(`${join(ws, "sub")}\n`);
    expect(await failed({ command: "pwd", cwd: "../outside" })).toEqual({ code: "PERMISSION_DENIED", message: 'path "../outside" is outside the workspace' });
    expect(registry.check({ id: "c", name: "run_command", args: { command: "pwd", cwd: "../outside" } }).kind).toBe("denied");
    expect(await failed({ command: "pwd", cwd: "/" })).toMatchObject({ code: "PERMISSION_DENIED" });
    expect(await failed({ command: "pwd", cwd: "sub/../../outside" })).toMatchObject({ code: "PERMISSION_DENIED" });
    await symlink(join(base, "outside"), join(ws, "escape"));
    expect(await failed({ command: "touch pwned", cwd: "escape" })).toEqual({ code: "PERMISSION_DENIED", message: 'path "escape" is outside the workspace' });
    expect(existsSync(join(base, "outside", "pwned"))).toBe(false);
    expect(await failed({ command: "pwd", cwd: "nope" })).toEqual({ code: "TOOL_FAILED", message: 'cwd "nope" does not exist' });
    await writeFile(join(ws, "file.txt"), "x");
    expect(await failed({ command: "pwd", cwd: "file.txt" })).toEqual({ code: "TOOL_FAILED", message: 'cwd "file.txt" is not a directory' });
  });

  it("gives the command no secrets: only PATH, HOME (the workspace) and LANG", async () => {
    const saved = { ...process.env };
    process.env["OPENAI_API_KEY"] = "sk-test-command-secret-0123456789";
    process.env["LLM_API_KEY"] = "sk-test-llm-secret-0123456789";
    process.env["DEVMIND_API_KEYS"] = "alice=very-secret-key";
    process.env["DEVMIND_IMAGE_API_KEY"] = "sk-test-image-secret-0123456789";
    process.env["DATABASE_URL"] = "postgres://devmind:hunter2@127.0.0.1/devmind";
    try {
      const data = await ok({ command: "env" });
      const vars = Object.fromEntries(data.stdout.trim().split("\n").map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]));
      expect(Object.keys(vars).sort()).toEqual(["HOME", "LANG", "PATH", "PWD"]);
      expect(vars).toMatchObject({ HOME: ws, LANG: COMMAND_LIMITS.lang, PATH: COMMAND_LIMITS.defaultPath, PWD: ws });
      for (const secret of ["sk-test", "very-secret-key", "hunter2"]) expect(data.stdout).not.toContain(secret);
    } finally {
      for (const key of ["OPENAI_API_KEY", "LLM_API_KEY", "DEVMIND_API_KEYS", "DEVMIND_IMAGE_API_KEY", "DATABASE_URL"]) {
        if (saved[key] === undefined) delete process.env[key];
        else process.env[key] = saved[key];
      }
    }
  });

  it("on timeout kills the whole process group, grandchildren included", async () => {
    const data = await ok({ command: FAMILY, timeout_ms: 2_000 });
    expect(data).toMatchObject({ exit_code: null, signal: "SIGTERM", timed_out: true });
    const [child, grandchild] = pids("child.pid", "grandchild.pid") as [number, number];
    await waitFor(() => !isAlive(child) && !isAlive(grandchild), "the child and the grandchild to be gone");
  });

  it("ends what a command left running in the background when the shell exits", async () => {
    const data = await ok({ command: "sh -c 'sleep 30' & echo $! > child.pid; echo started" });
    expect(data).toMatchObject({ exit_code: 0, stdout: "started\n", timed_out: false });
    const [child] = pids("child.pid") as [number];
    await waitFor(() => !isAlive(child), "the background child to be gone");
  });

  it("clamps timeout_ms to the tool's own limit: a model cannot raise it", async () => {
    const tight = new ToolRegistry(builtinTools({ workspace: ws }), { workspace: ws, defaultTimeoutMs: 3_000, maxOutputChars: 12_000 });
    const data = await ok({ command: "sleep 30", timeout_ms: 10_000_000 }, tight);
    expect(data).toMatchObject({ exit_code: null, signal: "SIGTERM", timed_out: true });
  });

  it("a cancelled run's abort signal kills the process group", async () => {
    const cancel = new AbortController();
    const running = runCommand({ command: FAMILY }, { signal: cancel.signal });
    running.catch(() => undefined);
    // the outer shell writes child.pid after forking, and the inner one may write grandchild.pid first
    const written = (name: string): boolean => existsSync(join(ws, name)) && readFileSync(join(ws, name), "utf8").endsWith("\n");
    await waitFor(() => written("child.pid") && written("grandchild.pid"), "the child and the grandchild to start");
    const [child, grandchild] = pids("child.pid", "grandchild.pid") as [number, number];
    expect(isAlive(child) && isAlive(grandchild)).toBe(true);
    cancel.abort();
    await expect(running).rejects.toBeInstanceOf(RunCancelledError);
    await waitFor(() => !isAlive(child) && !isAlive(grandchild), "the child and the grandchild to be gone");
  });

  it("refuses deny-listed commands in the policy gate, before running anything", async () => {
    await writeFile(join(ws, "keep.txt"), "keep");
    for (const command of ["rm -rf keep.txt", "rm -r -f .", "rm   -fr   *", "mkfs.ext4 disk.img", "shutdown -h now", ":(){ :|:& };:"]) {
      expect(registry.check({ id: "c", name: "run_command", args: { command } }).kind).toBe("denied");
      const error = await failed({ command });
      expect(error.code).toBe("PERMISSION_DENIED");
      expect(error.message).toContain("deny-list");
    }
    expect(await readFile(join(ws, "keep.txt"), "utf8")).toBe("keep");
    expect(await failed({ command: "echo a\0b" })).toMatchObject({ code: "INVALID_ARGUMENTS" });
  });
});

describe.each(BACKENDS)("run_command in the agent graph on %s", (backend) => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    owner = await openBackend(backend);
    ({ db, drop } = await freshMigratedSchema(owner));
  });
  afterAll(async () => {
    await drop();
    await owner.close();
  });

  itOnPrimary(backend)("answers a deny-listed command with PERMISSION_DENIED, without an interrupt", async () => {
    await writeFile(join(ws, "keep.txt"), "keep");
    const { out, events } = await runAgent(db, ws, [{ tool_calls: [{ id: "d1", name: "run_command", args: { command: "rm -r  -f keep.txt" } }] }, { content: "I may not." }]);
    expect(out["__interrupt__"]).toBeUndefined();
    expect(out.stop_reason).toBe("completed");
    const pairs = pairing(out.messages);
    expect(pairs.map((p) => [p.id, p.name, p.envelope.ok, p.envelope.error?.code])).toEqual([["d1", "run_command", false, "PERMISSION_DENIED"]]);
    expect(events.some((e) => e.type === "approval.requested")).toBe(false);
    expect(events.some((e) => e.type === "tool.call.started")).toBe(false);
    expect(await readFile(join(ws, "keep.txt"), "utf8")).toBe("keep");
  });

  it("pauses for approval with the human-in-the-loop shape, and runs once approved", async () => {
    const first = await runAgent(db, ws, [{ tool_calls: [{ id: "r1", name: "run_command", args: { command: "echo hi > hi.txt; echo wrote" } }] }, { content: "done" }]);
    const interrupts = first.out["__interrupt__"] as { value: { actionRequests: Record<string, unknown>[]; reviewConfigs: unknown[] } }[];
    expect(interrupts).toHaveLength(1);
    expect(interrupts[0]?.value.actionRequests).toEqual([
      { name: "run_command", args: { command: "echo hi > hi.txt; echo wrote" }, description: expect.any(String), tool_call_id: "r1", risk: "medium" },
    ]);
    expect(interrupts[0]?.value.reviewConfigs).toMatchObject([{ actionName: "run_command", allowedDecisions: ["approve", "edit", "reject"] }]);
    expect(existsSync(join(ws, "hi.txt"))).toBe(false);
    const out = (await first.graph.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), first.config as never)) as typeof first.out;
    expect(out.stop_reason).toBe("completed");
    expect(pairing(out.messages).map((p) => [p.id, p.envelope.ok, p.envelope.data])).toEqual([
      ["r1", true, { exit_code: 0, signal: null, stdout: "wrote\n", stderr: "", timed_out: false, truncated: false }],
    ]);
    expect(await readFile(join(ws, "hi.txt"), "utf8")).toBe("hi\n");
  });

  itOnPrimary(backend)("refuses an approved call edited into a deny-listed command", async () => {
    await writeFile(join(ws, "keep.txt"), "keep");
    const first = await runAgent(db, ws, [{ tool_calls: [{ id: "e1", name: "run_command", args: { command: "ls" } }] }, { content: "done" }]);
    expect(first.out["__interrupt__"]).toBeDefined();
    const out = (await first.graph.invoke(
      new Command({ resume: { decisions: [{ type: "edit", editedAction: { name: "run_command", args: { command: "rm -rf keep.txt" } } }] } }),
      first.config as never,
    )) as typeof first.out;
    expect(pairing(out.messages).map((p) => [p.id, p.envelope.error?.code])).toEqual([["e1", "PERMISSION_DENIED"]]);
    expect(await readFile(join(ws, "keep.txt"), "utf8")).toBe("keep");
  });
});
