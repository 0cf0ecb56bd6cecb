import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline/promises";
import type { ActionRequest } from "../graph/approvals.js";
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
 * reason) or later. Repeats the question on an unknown answer or unusable edited JSON. Rejects
 * with an AbortError when `io.signal` aborts.
 */
export async function askApproval(request: ActionRequest, io: PromptIo): Promise<ApprovalAnswer> {
  const write = (text: string): void => void io.output.write(text);
  write(`\n⏸ ${request.name} needs approval (risk ${request.risk})\n`);
  if (request.description) write(`  ${oneLine(request.description)}\n`);
  for (const [key, value] of Object.entries(request.args)) write(`  ${key}: ${preview(value)}\n`);
  for (;;) {
    const answer = (await ask(io, "  [a]pprove  [e]dit  [r]eject  [l]ater › ")).trim().toLowerCase();
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
