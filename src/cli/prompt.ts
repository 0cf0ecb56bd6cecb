import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { emitKeypressEvents } from "node:readline";
import { createInterface } from "node:readline/promises";
import type { ActionRequest } from "../vocabulary/hitl.js";
import { oneLine } from "./timeline.js";

/** What the person at the terminal decided for one call. `later` leaves the run waiting. */
export type ApprovalAnswer =
  | { type: "approve" }
  | { type: "edit"; args: Record<string, unknown> }
  | { type: "reject"; reason?: string }
  | { type: "later" };

/** The terminal the prompt talks to. */
export interface PromptIo {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** Aborts a pending question (Ctrl-C reached the process some other way). */
  signal: AbortSignal;
  /** Ctrl-C typed while the question is open (readline catches it in raw mode). */
  onInterrupt: () => void;
}

/**
 * Asks about one call waiting for approval: approve, edit (the arguments open as JSON in
 * $VISUAL / $EDITOR, or are read from one line when neither is set), reject (with an optional
 * reason) or later. On a terminal one keypress answers (a / e / r / l, no Enter); from a pipe a
 * line is read. Repeats the question on an unknown answer or unusable edited JSON. Rejects with
 * an AbortError when `io.signal` aborts. The timeline above already said the call needs
 * approval, so the prompt names the call and shows its arguments in full, without saying it again.
 */
export async function askApproval(request: ActionRequest, io: PromptIo): Promise<ApprovalAnswer> {
  const write = (text: string): void => void io.output.write(text);
  write(`\n  ${request.name}  [call ${request.tool_call_id}]\n`);
  if (request.description) write(`  ${oneLine(request.description)}\n`);
  for (const [key, value] of Object.entries(request.args)) write(`  ${key}: ${preview(value)}\n`);
  for (;;) {
    const answer = (await askKey(io, "  [a]pprove  [e]dit  [r]eject  [l]ater › ")).trim().toLowerCase();
    if (answer === "a" || answer === "approve" || answer === "y" || answer === "yes") return { type: "approve" };
    if (answer === "l" || answer === "later") return { type: "later" };
    if (answer === "r" || answer === "reject" || answer === "n" || answer === "no") {
      const reason = (await ask(io, "  reason (optional) › ")).trim();
      return reason === "" ? { type: "reject" } : { type: "reject", reason };
    }
    if (answer === "e" || answer === "edit") {
      const edited = await editArgs(request.args, io);
      if (edited !== null) return { type: "edit", args: edited };
      continue;
    }
    write("  please answer a, e, r or l\n");
  }
}

/**
 * One keypress on a terminal (raw mode, restored after; Enter alone is ignored, Ctrl-C goes to
 * `io.onInterrupt`), echoed with a newline; a line from anything else.
 */
async function askKey(io: PromptIo, question: string): Promise<string> {
  const input = io.input as NodeJS.ReadStream;
  if (input.isTTY !== true || typeof input.setRawMode !== "function") return ask(io, question);
  emitKeypressEvents(input);
  const wasRaw = input.isRaw;
  input.setRawMode(true);
  input.resume();
  // asked once raw mode is on: a key pressed as soon as the question shows is read as a key
  io.output.write(question);
  try {
    return await new Promise<string>((resolve, reject) => {
      const cleanup = (): void => {
        input.removeListener("keypress", onKey);
        io.signal.removeEventListener("abort", onAbort);
      };
      const onAbort = (): void => {
        cleanup();
        io.output.write("\n");
        reject(io.signal.reason instanceof Error ? io.signal.reason : new DOMException("the question was aborted", "AbortError"));
      };
      const onKey = (text: string | undefined, key: { name?: string; ctrl?: boolean } | undefined): void => {
        if (key?.ctrl === true && key.name === "c") return void io.onInterrupt();
        if (key?.name === "return" || key?.name === "enter" || text === undefined || text === "" || key?.ctrl === true) return;
        cleanup();
        io.output.write(`${text}\n`);
        resolve(text);
      };
      if (io.signal.aborted) return onAbort();
      input.on("keypress", onKey);
      io.signal.addEventListener("abort", onAbort, { once: true });
    });
  } finally {
    input.setRawMode(wasRaw);
    input.pause();
  }
}

async function ask(io: PromptIo, question: string): Promise<string> {
  const rl = createInterface({ input: io.input, output: io.output, terminal: true });
  rl.on("SIGINT", () => io.onInterrupt());
  try {
    return await rl.question(question, { signal: io.signal });
  } finally {
    rl.close();
  }
}

/** The edited arguments, or null (after saying why) when they are not a JSON object. */
async function editArgs(args: Record<string, unknown>, io: PromptIo): Promise<Record<string, unknown> | null> {
  const fromEditor = openInEditor(args);
  const text = fromEditor ?? (await ask(io, "  arguments as JSON › "));
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    io.output.write("  the arguments must be a JSON object\n");
  } catch (error) {
    io.output.write(`  not valid JSON: ${(error as Error).message}\n`);
  }
  return null;
}

/**
 * Opens the arguments in the user's editor and returns the saved text, or null when neither
 * VISUAL nor EDITOR is set. The shell expands the variables, so this module never reads the
 * environment itself (src/config.ts is the only reader of devmind's own settings).
 */
function openInEditor(args: Record<string, unknown>): string | null {
  const hasEditor = spawnSync("sh", ["-c", 'test -n "${VISUAL:-$EDITOR}"'], { stdio: "ignore" });
  if (hasEditor.status !== 0) return null;
  const dir = mkdtempSync(join(tmpdir(), "devmind-edit-"));
  const file = join(dir, "arguments.json");
  try {
    writeFileSync(file, `${JSON.stringify(args, null, 2)}\n`, { mode: 0o600 });
    const result = spawnSync("sh", ["-c", '${VISUAL:-$EDITOR} "$1"', "devmind-editor", file], { stdio: "inherit" });
    if (result.status !== 0) return "";
    return readFileSync(file, "utf8");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? "undefined";
  return text.length > 400 ? `${text.slice(0, 399)}…` : text;
}
