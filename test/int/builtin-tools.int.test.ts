import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEMO_TEXT, TOOL_LIMITS } from "../../src/constants.js";
import { builtinTools } from "../../src/tools/builtin/index.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { ToolFailure } from "../../src/tools/tool-failure.js";
import type { ToolResult } from "../../src/tools/types.js";
import { ensureWorkspace, resolveInWorkspace } from "../../src/tools/workspace.js";

const NOW = new Date("2024-01-15T12:00:00.000Z");

let base: string;
let ws: string;
let outside: string;
let registry: ToolRegistry;

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "devmind-tools-")));
  ws = await ensureWorkspace(join(base, "workspace"));
  outside = join(base, "outside");
  await mkdir(outside);
  await writeFile(join(outside, "secret.txt"), "top secret\n");
  registry = new ToolRegistry(builtinTools({ workspace: ws, now: () => NOW }), { workspace: ws, defaultTimeoutMs: 5_000, maxOutputChars: 12_000 });
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

let callCount = 0;
function run(name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  callCount += 1;
  return registry.execute({ id: `call_${callCount}`, name, args });
}

async function ok(name: string, args: Record<string, unknown> = {}): Promise<unknown> {
  const result = await run(name, args);
  expect(result, JSON.stringify(result)).toMatchObject({ ok: true, error: null, truncated: false });
  return result.data;
}

async function failed(name: string, args: Record<string, unknown> = {}): Promise<{ code: string; message: string }> {
  const result = await run(name, args);
  if (result.ok) throw new Error(`expected ${name} to fail, got ${JSON.stringify(result)}`);
  expect(result.data).toBeNull();
  return result.error;
}

function denied(path: string) {
  return { code: "PERMISSION_DENIED", message: `path ${JSON.stringify(path)} is outside the workspace` };
}

describe("built-in tool metadata", () => {
  it("matches CONTRACT section 4 (side effect / approval / idempotent)", () => {
    const table = Object.fromEntries(builtinTools({ workspace: ws }).map((t) => [t.name, [t.sideEffect, t.approval, t.idempotent]]));
    expect(table).toEqual({
      add: ["none", false, true],
      get_current_time: ["none", false, true],
      read_demo_text: ["none", false, true],
      list_files: ["none", false, true],
      read_file: ["none", false, true],
      write_file: ["local", true, true],
      append_file: ["local", false, false],
      run_command: ["local", true, false],
    });
    const checked = registry.check({ id: "c", name: "write_file", args: { path: "a.txt", content: "x" } });
    expect(checked).toMatchObject({ kind: "ready", needsApproval: true, risk: "medium" });
  });
});

describe("add, get_current_time, read_demo_text", () => {
  it("adds", async () => {
    expect(await ok("add", { a: 2, b: 3.5 })).toEqual({ sum: 5.5 });
    expect(await failed("add", { a: Number.MAX_VALUE, b: Number.MAX_VALUE })).toEqual({ code: "TOOL_FAILED", message: "the sum is too large to represent" });
  });

  it("tells the time in a real zone, in UTC by default, and with half-hour offsets", async () => {
    expect(await ok("get_current_time", { timezone: "Asia/Tokyo" })).toEqual({
      timezone: "Asia/Tokyo",
      iso: "2024-01-15T12:00:00.000Z",
      local: "2024-01-15T21:00:00+09:00",
    });
    expect(await ok("get_current_time")).toEqual({ timezone: "UTC", iso: "2024-01-15T12:00:00.000Z", local: "2024-01-15T12:00:00+00:00" });
    expect(await ok("get_current_time", { timezone: "America/St_Johns" })).toMatchObject({ local: "2024-01-15T08:30:00-03:30" });
  });

  it("uses the real clock by default", async () => {
    const [, time] = builtinTools({ workspace: ws });
    const before = Date.now();
    const result = (await new ToolRegistry([time!], { workspace: ws, defaultTimeoutMs: 1_000, maxOutputChars: 1_000 }).execute({ id: "t", name: "get_current_time", args: {} })) as {
      data: { iso: string };
    };
    expect(Date.parse(result.data.iso)).toBeGreaterThanOrEqual(before - 1_000);
    expect(Date.parse(result.data.iso)).toBeLessThanOrEqual(Date.now() + 1_000);
  });

  it("refuses an unknown zone with INVALID_ARGUMENTS naming it", async () => {
    expect(await failed("get_current_time", { timezone: "Mars/Olympus_Mons" })).toEqual({
      code: "INVALID_ARGUMENTS",
      message: 'invalid arguments for get_current_time: timezone: unknown time zone "Mars/Olympus_Mons"; use an IANA name such as "Europe/Paris" or "UTC"',
    });
  });

  it("returns the demo text", async () => {
    expect(await ok("read_demo_text", { ignored: true })).toEqual({ title: "About devmind", text: DEMO_TEXT });
    expect(DEMO_TEXT.split("\n\n").length).toBeGreaterThanOrEqual(3);
  });
});

describe("write_file, append_file, read_file", () => {
  it("writes (creating parents), appends, then reads back", async () => {
    expect(await ok("write_file", { path: "notes/todo.txt", content: "one\n" })).toEqual({ path: "notes/todo.txt", bytes: 4 });
    expect(await ok("append_file", { path: "notes/todo.txt", content: "two\nthrée\n" })).toEqual({ path: "notes/todo.txt", bytes: 11, size: 15 });
    expect(await ok("read_file", { path: "notes/todo.txt" })).toEqual({ path: "notes/todo.txt", offset: 0, lines: 3, total_lines: 3, content: "one\ntwo\nthrée" });
    expect(await readFile(join(ws, "notes/todo.txt"), "utf8")).toBe("one\ntwo\nthrée\n");
  });

  it("overwrites on write and creates on append", async () => {
    await ok("write_file", { path: "a.txt", content: "long old content" });
    expect(await ok("write_file", { path: "a.txt", content: "new" })).toEqual({ path: "a.txt", bytes: 3 });
    expect(await readFile(join(ws, "a.txt"), "utf8")).toBe("new");
    expect(await ok("append_file", { path: "deep/er/log.txt", content: "x" })).toEqual({ path: "deep/er/log.txt", bytes: 1, size: 1 });
  });

  it("pages with offset and limit", async () => {
    await writeFile(join(ws, "ten.txt"), Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n"));
    expect(await ok("read_file", { path: "ten.txt", offset: 3, limit: 2 })).toEqual({ path: "ten.txt", offset: 3, lines: 2, total_lines: 10, content: "line 4\nline 5" });
    expect(await ok("read_file", { path: "ten.txt", offset: 8 })).toEqual({ path: "ten.txt", offset: 8, lines: 2, total_lines: 10, content: "line 9\nline 10" });
    expect(await ok("read_file", { path: "ten.txt", offset: 50 })).toEqual({ path: "ten.txt", offset: 50, lines: 0, total_lines: 10, content: "" });
    await writeFile(join(ws, "crlf.txt"), "a\r\nb\r\n");
    expect(await ok("read_file", { path: "crlf.txt" })).toEqual({ path: "crlf.txt", offset: 0, lines: 2, total_lines: 2, content: "a\nb" });
    await writeFile(join(ws, "empty.txt"), "");
    expect(await ok("read_file", { path: "empty.txt" })).toEqual({ path: "empty.txt", offset: 0, lines: 0, total_lines: 0, content: "" });
  });

  it("returns fewer whole lines when more would not fit the output limit", async () => {
    await writeFile(join(ws, "wide.txt"), Array.from({ length: 50 }, (_, i) => `${i}`.padEnd(40, "x")).join("\n"));
    registry = new ToolRegistry(builtinTools({ workspace: ws }), { workspace: ws, defaultTimeoutMs: 5_000, maxOutputChars: 500 });
    const first = (await ok("read_file", { path: "wide.txt" })) as { lines: number; total_lines: number; content: string };
    expect(first.lines).toBeGreaterThan(5);
    expect(first.lines).toBeLessThan(50);
    expect(first.total_lines).toBe(50);
    expect(first.content.split("\n")).toHaveLength(first.lines);
    expect(first.content.split("\n").every((line) => line.length === 40)).toBe(true);
    const next = (await ok("read_file", { path: "wide.txt", offset: first.lines })) as { content: string };
    expect(next.content.startsWith(`${first.lines}`.padEnd(40, "x"))).toBe(true);
    await writeFile(join(ws, "one-line.txt"), "y".repeat(5_000));
    const huge = (await ok("read_file", { path: "one-line.txt" })) as { lines: number; content: string };
    expect(huge.lines).toBe(1);
    expect(huge.content).toMatch(/^y+…\[truncated \d+ chars\]$/);
  });

  it("validates offset and limit", async () => {
    for (const args of [{ offset: -1 }, { offset: 1.5 }, { limit: 0 }, { limit: TOOL_LIMITS.readFileMaxLines + 1 }, { limit: "10" }]) {
      expect((await failed("read_file", { path: "x.txt", ...args })).code).toBe("INVALID_ARGUMENTS");
    }
  });

  it("refuses directories, missing files, oversized files and binary files with clear messages", async () => {
    await mkdir(join(ws, "notes"));
    expect(await failed("read_file", { path: "notes" })).toEqual({ code: "TOOL_FAILED", message: '"notes" is a directory; use list_files to see its entries' });
    expect(await failed("read_file", { path: "nope.txt" })).toEqual({ code: "TOOL_FAILED", message: 'no such file: "nope.txt"' });
    await writeFile(join(ws, "big.log"), "");
    await truncate(join(ws, "big.log"), TOOL_LIMITS.readFileMaxBytes + 1);
    expect(await failed("read_file", { path: "big.log" })).toEqual({
      code: "TOOL_FAILED",
      message: `"big.log" is ${TOOL_LIMITS.readFileMaxBytes + 1} bytes; read_file reads files of at most ${TOOL_LIMITS.readFileMaxBytes} bytes`,
    });
    await writeFile(join(ws, "image.bin"), Buffer.from([0x89, 0x50, 0x00, 0x01]));
    expect(await failed("read_file", { path: "image.bin" })).toEqual({ code: "TOOL_FAILED", message: '"image.bin" looks like a binary file; read_file reads text only' });
  });

  it("refuses to write over a directory or the workspace root", async () => {
    await mkdir(join(ws, "dir"));
    expect(await failed("write_file", { path: "dir", content: "x" })).toEqual({ code: "TOOL_FAILED", message: '"dir" is a directory' });
    expect(await failed("append_file", { path: ".", content: "x" })).toEqual({ code: "TOOL_FAILED", message: "the workspace root is a directory, not a file" });
  });

  it("reports a file used as a directory", async () => {
    await writeFile(join(ws, "plain.txt"), "x");
    expect(await failed("write_file", { path: "plain.txt/child.txt", content: "x" })).toEqual({
      code: "TOOL_FAILED",
      message: 'a parent of "plain.txt/child.txt" is a file, not a directory',
    });
    expect(await failed("read_file", { path: "plain.txt/child.txt" })).toEqual({ code: "TOOL_FAILED", message: 'no such file: "plain.txt/child.txt"' });
  });
});

describe("list_files", () => {
  it("lists entries sorted with type and size", async () => {
    await writeFile(join(ws, "b.txt"), "abc");
    await mkdir(join(ws, "a-dir"));
    await writeFile(join(ws, "a-dir", "inner.md"), "# hi\n");
    await symlink(join(ws, "b.txt"), join(ws, "c-link"));
    expect(await ok("list_files")).toEqual({
      path: ".",
      entries: [
        { name: "a-dir", type: "dir", size: null },
        { name: "b.txt", type: "file", size: 3 },
        { name: "c-link", type: "symlink", size: null },
      ],
      total: 3,
      truncated: false,
    });
    expect(await ok("list_files", { path: "a-dir" })).toEqual({ path: "a-dir", entries: [{ name: "inner.md", type: "file", size: 5 }], total: 1, truncated: false });
    expect(await ok("list_files", { path: "a-dir/.." })).toMatchObject({ path: ".", total: 3 });
  });

  it("caps the listing at the entry limit and says so", async () => {
    const count = TOOL_LIMITS.listFilesMaxEntries + 5;
    await Promise.all(Array.from({ length: count }, (_, i) => writeFile(join(ws, `f${String(i).padStart(4, "0")}.txt`), "")));
    registry = new ToolRegistry(builtinTools({ workspace: ws }), { workspace: ws, defaultTimeoutMs: 5_000, maxOutputChars: 100_000 });
    const data = (await ok("list_files")) as { entries: { name: string }[]; total: number; truncated: boolean };
    expect(data.entries).toHaveLength(TOOL_LIMITS.listFilesMaxEntries);
    expect(data.entries[0]).toEqual({ name: "f0000.txt", type: "file", size: 0 });
    expect(data.entries.at(-1)?.name).toBe("f0499.txt");
    expect(data.total).toBe(count);
    expect(data.truncated).toBe(true);
  });

  it("stops before the output limit so the result stays structured", async () => {
    await Promise.all(Array.from({ length: 300 }, (_, i) => writeFile(join(ws, `f${String(i).padStart(4, "0")}.txt`), "")));
    const data = (await ok("list_files")) as { entries: { name: string }[]; total: number; truncated: boolean };
    expect(JSON.stringify(data).length).toBeLessThanOrEqual(12_000);
    expect(data.entries.length).toBeGreaterThan(200);
    expect(data.entries.length).toBeLessThan(300);
    expect(data.total).toBe(300);
    expect(data.truncated).toBe(true);
  });

  it("refuses files and missing directories", async () => {
    await writeFile(join(ws, "file.txt"), "x");
    expect(await failed("list_files", { path: "file.txt" })).toEqual({ code: "TOOL_FAILED", message: '"file.txt" is not a directory; use read_file to read a file' });
    expect(await failed("list_files", { path: "missing" })).toEqual({ code: "TOOL_FAILED", message: 'no such directory: "missing"' });
  });
});

describe("workspace confinement", () => {
  it.each(["../outside/secret.txt", "a/../../outside/secret.txt", "../../../../../../etc/passwd", "./.././outside/secret.txt"])("refuses the .. chain %j", async (path) => {
    expect(await failed("read_file", { path })).toEqual(denied(path));
    expect(await failed("write_file", { path, content: "pwned" })).toEqual(denied(path));
    expect(await readFile(join(outside, "secret.txt"), "utf8")).toBe("top secret\n");
  });

  it("refuses absolute paths outside and accepts absolute paths inside", async () => {
    const secret = join(outside, "secret.txt");
    expect(await failed("read_file", { path: secret })).toEqual(denied(secret));
    expect(await failed("read_file", { path: "/etc/passwd" })).toEqual(denied("/etc/passwd"));
    expect(await failed("list_files", { path: "/" })).toEqual(denied("/"));
    expect(await failed("append_file", { path: join(outside, "new.txt"), content: "x" })).toEqual(denied(join(outside, "new.txt")));
    expect(existsSync(join(outside, "new.txt"))).toBe(false);
    expect(await ok("write_file", { path: join(ws, "inside.txt"), content: "ok" })).toEqual({ path: "inside.txt", bytes: 2 });
    expect(await ok("list_files", { path: ws })).toMatchObject({ path: "." });
  });

  it("allows .. that stays inside", async () => {
    await writeFile(join(ws, "a.txt"), "hello");
    expect(await ok("read_file", { path: "sub/../a.txt" })).toMatchObject({ path: "a.txt", content: "hello" });
  });

  it("refuses reading and writing through a symlink to a file outside", async () => {
    await symlink(join(outside, "secret.txt"), join(ws, "link.txt"));
    expect(await failed("read_file", { path: "link.txt" })).toEqual(denied("link.txt"));
    expect(await failed("write_file", { path: "link.txt", content: "pwned" })).toEqual(denied("link.txt"));
    expect(await failed("append_file", { path: "link.txt", content: "pwned" })).toEqual(denied("link.txt"));
    expect(await readFile(join(outside, "secret.txt"), "utf8")).toBe("top secret\n");
  });

  it("refuses reading, listing and writing through a symlinked directory pointing outside", async () => {
    await symlink(outside, join(ws, "out"));
    expect(await failed("read_file", { path: "out/secret.txt" })).toEqual(denied("out/secret.txt"));
    expect(await failed("list_files", { path: "out" })).toEqual(denied("out"));
    expect(await failed("write_file", { path: "out/new.txt", content: "pwned" })).toEqual(denied("out/new.txt"));
    expect(await failed("write_file", { path: "out/nested/deeper/new.txt", content: "pwned" })).toEqual(denied("out/nested/deeper/new.txt"));
    expect(await failed("append_file", { path: "out/secret.txt", content: "pwned" })).toEqual(denied("out/secret.txt"));
    expect(existsSync(join(outside, "new.txt"))).toBe(false);
    expect(existsSync(join(outside, "nested"))).toBe(false);
    expect(await readFile(join(outside, "secret.txt"), "utf8")).toBe("top secret\n");
  });

  it("refuses writing through a dangling symlink whose target is outside", async () => {
    await symlink(join(outside, "created.txt"), join(ws, "dangling"));
    await symlink(join(outside, "newdir"), join(ws, "dangling-dir"));
    expect(await failed("write_file", { path: "dangling", content: "pwned" })).toEqual(denied("dangling"));
    expect(await failed("write_file", { path: "dangling-dir/x.txt", content: "pwned" })).toEqual(denied("dangling-dir/x.txt"));
    expect(existsSync(join(outside, "created.txt"))).toBe(false);
    expect(existsSync(join(outside, "newdir"))).toBe(false);
  });

  it("follows symlinks that stay inside and reports the real path", async () => {
    await writeFile(join(ws, "real.txt"), "real");
    await symlink(join(ws, "real.txt"), join(ws, "alias.txt"));
    await symlink("real.txt", join(ws, "relative-alias.txt"));
    expect(await ok("read_file", { path: "alias.txt" })).toMatchObject({ path: "real.txt", content: "real" });
    expect(await ok("read_file", { path: "relative-alias.txt" })).toMatchObject({ path: "real.txt", content: "real" });
  });

  it("refuses NUL bytes", async () => {
    for (const [tool, args] of [
      ["read_file", { path: "a\0b.txt" }],
      ["write_file", { path: "ok.txt\0../../x", content: "x" }],
      ["list_files", { path: "\0" }],
    ] as const) {
      const error = await failed(tool, args);
      expect(error.code).toBe("PERMISSION_DENIED");
      expect(error.message).toBe(`path ${JSON.stringify(args.path)} contains a NUL byte`);
    }
  });

  it("refuses symlink loops without hanging", async () => {
    await symlink(join(ws, "loop-b"), join(ws, "loop-a"));
    await symlink(join(ws, "loop-a"), join(ws, "loop-b"));
    expect(await failed("read_file", { path: "loop-a" })).toEqual({ code: "TOOL_FAILED", message: 'too many levels of symbolic links: "loop-a"' });
  });
});

describe("resolveInWorkspace and ensureWorkspace", () => {
  it("returns real paths, honours mustExist, refuses empty paths", async () => {
    await writeFile(join(ws, "x.txt"), "x");
    expect(await resolveInWorkspace(ws, "x.txt", { mustExist: true })).toBe(join(ws, "x.txt"));
    expect(await resolveInWorkspace(ws, "new/dir/file.txt")).toBe(join(ws, "new/dir/file.txt"));
    expect(await resolveInWorkspace(ws, ".")).toBe(ws);
    await expect(resolveInWorkspace(ws, "missing.txt", { mustExist: true })).rejects.toMatchObject({ code: "TOOL_FAILED" });
    const empty = await resolveInWorkspace(ws, "").catch((e: unknown) => e);
    expect(empty).toBeInstanceOf(ToolFailure);
    expect(empty).toMatchObject({ code: "INVALID_ARGUMENTS", message: "path is empty" });
    await expect(resolveInWorkspace(ws, "../outside")).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
  });

  it("accepts the workspace by a symlinked name", async () => {
    const aliasRoot = join(base, "ws-alias");
    await symlink(ws, aliasRoot);
    await writeFile(join(ws, "x.txt"), "x");
    expect(await resolveInWorkspace(aliasRoot, join(aliasRoot, "x.txt"))).toBe(join(ws, "x.txt"));
    expect(await resolveInWorkspace(aliasRoot, "x.txt")).toBe(join(ws, "x.txt"));
  });

  it("ensureWorkspace creates the directory and returns its real path", async () => {
    const nested = join(base, "a", "b", "c");
    expect(await ensureWorkspace(nested)).toBe(nested);
    expect(await ensureWorkspace(nested)).toBe(nested);
    expect(existsSync(nested)).toBe(true);
  });
});
