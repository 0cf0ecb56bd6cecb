import { stat } from "node:fs/promises";
import { z } from "zod";
import { COMMAND_LIMITS } from "../../constants.js";
import { deniedCommandReason } from "../command-deny-list.js";
import { defineTool, type Tool } from "../define-tool.js";
import { runInProcessGroup } from "../process-group.js";
import { ToolFailure } from "../tool-failure.js";
import { quote } from "../tool-result.js";
import { fsFailure, lexicalEscape, locateInWorkspace } from "../workspace.js";

/** What `run_command` returns. `exit_code` is null when a signal ended the command (`signal` says which). */
export interface CommandResult {
  exit_code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timed_out: boolean;
  /** Output was cut: beyond the capture limit, or to fit the call's output limit (the middle goes). */
  truncated: boolean;
}

/** Time kept back from the call's timeout so a timed-out command is still killed and reported. */
const REPORT_RESERVE_MS = COMMAND_LIMITS.killGraceMs + COMMAND_LIMITS.reportSlackMs;

/**
 * `run_command {command, cwd?, timeout_ms?}` -> `{exit_code, signal, stdout, stderr, timed_out,
 * truncated}`: runs `/bin/sh -c command` in the workspace (or `cwd` inside it).
 * [local / approval required / not idempotent]
 *
 * Why these rules: a model-written command is the most dangerous thing an agent does. So the
 * deny-list (`deniedCommandReason`) refuses destructive commands in the policy gate, before a
 * human is even asked; every other call needs approval unless DEVMIND_AUTO_APPROVE waives it.
 * The command runs in its own process group, killed as a whole on timeout, cancel and when the
 * shell exits; with only PATH, HOME (the workspace) and LANG in its environment, so no API key or
 * database URL of this process reaches it; with stdin closed. `timeout_ms` can only lower the
 * call's limit (DEVMIND_TOOL_TIMEOUT_MS), never raise it. A non-zero exit is a result, not a tool
 * failure: the model reads `exit_code` and `stderr`.
 */
export function runCommandTool(workspace: string): Tool {
  return defineTool({
    name: "run_command",
    description:
      "Run a shell command (/bin/sh -c) in the workspace and return its exit code, stdout and stderr. Needs approval. Destructive commands (rm -rf, mkfs, shutdown, ...) are refused.",
    schema: z.object({
      command: z.string().min(1).max(COMMAND_LIMITS.commandMaxChars).describe("the shell command line"),
      cwd: z.string().min(1).optional().describe("working directory, relative to the workspace root (default: the root)"),
      timeout_ms: z.number().int().min(1).optional().describe("stop the command after this many milliseconds (capped by the tool's own limit)"),
    }),
    sideEffect: "local",
    approval: true,
    idempotent: false,
    deny: ({ command, cwd }) => deniedCommandReason(command) ?? (cwd === undefined ? null : lexicalEscape(workspace, cwd)),
    async execute({ command, cwd, timeout_ms }, ctx) {
      if (command.includes("\0")) throw new ToolFailure("INVALID_ARGUMENTS", "command contains a NUL byte");
      const dir = await locateInWorkspace(workspace, cwd ?? ".");
      try {
        if (!dir.exists) throw new ToolFailure("TOOL_FAILED", `cwd ${quote(dir.relative)} does not exist`);
        if (!(await stat(dir.absolute)).isDirectory()) throw new ToolFailure("TOOL_FAILED", `cwd ${quote(dir.relative)} is not a directory`);
      } catch (error) {
        throw fsFailure(error, dir.relative);
      }
      const ceiling = ctx.timeoutMs >= 2 * REPORT_RESERVE_MS ? ctx.timeoutMs - REPORT_RESERVE_MS : Math.max(1, Math.floor(ctx.timeoutMs / 2));
      const outcome = await runInProcessGroup({
        command,
        cwd: dir.absolute,
        env: { PATH: COMMAND_LIMITS.defaultPath, HOME: dir.root, LANG: COMMAND_LIMITS.lang },
        timeoutMs: Math.min(timeout_ms ?? ceiling, ceiling),
        signal: ctx.signal,
        maxBytes: COMMAND_LIMITS.outputMaxBytes,
        killGraceMs: COMMAND_LIMITS.killGraceMs,
        closeWaitMs: COMMAND_LIMITS.closeWaitMs,
      });
      const stdout = withDropped(outcome.stdout.toString("utf8"), outcome.stdoutDropped);
      const stderr = withDropped(outcome.stderr.toString("utf8"), outcome.stderrDropped);
      const base: CommandResult = { exit_code: outcome.exitCode, signal: outcome.signal, stdout: "", stderr: "", timed_out: outcome.timedOut, truncated: true };
      const fitted = fitPair(stdout, stderr, ctx.maxOutputChars - JSON.stringify(base).length);
      return { ...base, stdout: fitted[0], stderr: fitted[1], truncated: outcome.stdoutDropped > 0 || outcome.stderrDropped > 0 || fitted[2] };
    },
  });
}

function withDropped(text: string, dropped: number): string {
  return dropped === 0 ? text : `${text}\n…[${dropped} more bytes not captured]`;
}

/** JSON length of a string's content (escapes counted, quotes not). */
function jsonLength(text: string): number {
  return JSON.stringify(text).length - 2;
}

/**
 * Cuts both streams so their JSON fits `budget` characters together: each gets half, and what
 * one does not need goes to the other. Returns the texts and whether anything was cut.
 */
function fitPair(a: string, b: string, budget: number): [string, string, boolean] {
  const room = Math.max(0, budget);
  const la = jsonLength(a);
  const lb = jsonLength(b);
  if (la + lb <= room) return [a, b, false];
  const half = Math.floor(room / 2);
  const forA = la <= half ? la : Math.max(half, room - Math.min(lb, half));
  const forB = room - Math.min(la, forA);
  return [cutMiddle(a, forA), cutMiddle(b, forB), true];
}

/**
 * Keeps the head and the tail (where errors usually are) of `text` so its JSON fits `maxJson`
 * characters, with a marker saying how many characters went.
 */
function cutMiddle(text: string, maxJson: number): string {
  if (jsonLength(text) <= maxJson) return text;
  let keep = maxJson;
  // sized for the largest count the marker can show, then filled in with the real one
  const widest = markerFor(text.length).length;
  for (let attempt = 0; attempt < 32; attempt += 1) {
    const room = Math.max(0, keep - widest);
    const head = safeSlice(text, 0, Math.floor(room * 0.4));
    const tail = safeSliceEnd(text, room - head.length);
    const marker = markerFor(text.length - head.length - tail.length);
    const candidate = head + marker + tail;
    const over = jsonLength(candidate) - maxJson;
    if (over <= 0 || room === 0) return over <= 0 ? candidate : marker.slice(0, Math.max(0, maxJson));
    keep -= Math.max(1, over);
  }
  return "";
}

function markerFor(removed: number): string {
  return `\n…[truncated ${removed} chars]…\n`;
}

/** `text.slice(0, end)` without splitting a surrogate pair. */
function safeSlice(text: string, start: number, end: number): string {
  let stop = Math.max(start, end);
  const code = text.charCodeAt(stop - 1);
  if (stop > start && code >= 0xd800 && code <= 0xdbff) stop -= 1;
  return text.slice(start, stop);
}

/** The last `count` characters without splitting a surrogate pair. */
function safeSliceEnd(text: string, count: number): string {
  if (count <= 0) return "";
  let from = Math.max(0, text.length - count);
  const code = text.charCodeAt(from);
  if (from > 0 && code >= 0xdc00 && code <= 0xdfff) from += 1;
  return text.slice(from);
}
