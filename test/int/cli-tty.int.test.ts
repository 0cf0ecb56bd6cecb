import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { cliContexts, runIdFrom } from "../helpers/cli-env.js";
import { itWithPostgres } from "../helpers/databases.js";
import { spawnInPty } from "../helpers/pty.js";

const WRITE_SCRIPT: ScriptedTurn[] = [
  { content: "Writing the note.", tool_calls: [{ id: "c_write", name: "write_file", args: { path: "note.txt", content: "hello" } }], delay_ms: 200 },
  { content: "The note is written.", delay_ms: 200 },
];
const PROMPT = "[a]pprove  [e]dit  [r]eject  [l]ater";

const context = cliContexts();

/** The terminal's text without escape sequences and carriage returns. */
function screen(raw: string): string {
  return raw.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "").replace(/\r/g, "");
}

describe("devmind run on a terminal (pseudo-terminal)", () => {
  it("shows a live timeline and asks: approve runs the call and the run finishes (exit 0)", async () => {
    const ctx = context();
    const term = spawnInPty(["run", "write a note"], { ...ctx.env, ...ctx.script("w.json", WRITE_SCRIPT) }, { cwd: ctx.dir });
    await term.waitFor((out) => out.includes(PROMPT));
    // one keypress answers: no Enter
    term.write("a");
    const result = await term.exited;
    const text = screen(result.stdout);
    expect(result.code).toBe(0);
    expect(text).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] thinking \(model round 1\)/);
    expect(text).toContain("Writing the note.");
    // the pause is said once: the timeline's line, then the prompt names the call without repeating it
    expect(text).toContain('⏸ write_file(path="note.txt", content="hello") needs approval (risk medium)  [call c_write]');
    expect(text.match(/needs approval/g)).toHaveLength(1);
    expect(text).toContain("  write_file  [call c_write]");
    expect(text).toContain('  path: "note.txt"');
    expect(text).toContain("✓ approved write_file by cli:");
    expect(text).toMatch(/✓ write_file\(path="note.txt", content="hello"\)  \d+ ms/);
    expect(text).toContain("The note is written.");
    // the approval created the run that resumes the thread (the Platform's model): its summary ends the timeline
    const finished = /run ([0-9a-f-]{36}): success \(completed\) · 2 model rounds · 1 tool call/.exec(text)?.[1];
    expect(finished).toBeDefined();
    expect(finished).not.toBe(runIdFrom(text));
    expect(readFileSync(join(ctx.workspace, "note.txt"), "utf8")).toBe("hello");
  }, 300_000);

  itWithPostgres("reject asks for a reason; the model is told and the run finishes without the call", async () => {
    const ctx = context();
    const term = spawnInPty(["run", "write a note"], { ...ctx.env, ...ctx.script("w.json", WRITE_SCRIPT) }, { cwd: ctx.dir });
    await term.waitFor((out) => out.includes(PROMPT));
    term.write("r");
    await term.waitFor((out) => out.includes("reason (optional)"));
    term.write("too risky\r");
    const result = await term.exited;
    const text = screen(result.stdout);
    expect(result.code).toBe(0);
    expect(text).toMatch(/✗ rejected write_file by cli:\S+: too risky/);
    expect(text).toContain("success (completed)");
    expect(existsSync(join(ctx.workspace, "note.txt"))).toBe(false);
  }, 300_000);

  itWithPostgres("edit opens the arguments as JSON in $EDITOR and runs what was saved", async () => {
    const ctx = context();
    const editor = join(ctx.dir, "editor.sh");
    writeFileSync(editor, `#!/bin/sh\ngrep -q '"path": "note.txt"' "$1" || exit 1\nprintf '{"path":"edited.txt","content":"from the editor"}' > "$1"\n`);
    chmodSync(editor, 0o755);
    const term = spawnInPty(["run", "write a note"], { ...ctx.env, ...ctx.script("w.json", WRITE_SCRIPT), EDITOR: editor }, { cwd: ctx.dir });
    await term.waitFor((out) => out.includes(PROMPT));
    term.write("e");
    const result = await term.exited;
    const text = screen(result.stdout);
    expect(result.code).toBe(0);
    expect(text).toContain("✎ edited and approved write_file");
    expect(text).toMatch(/✓ write_file\(path="edited.txt", content="from the editor"\)/);
    expect(readFileSync(join(ctx.workspace, "edited.txt"), "utf8")).toBe("from the editor");
    expect(existsSync(join(ctx.workspace, "note.txt"))).toBe(false);
  }, 300_000);

  itWithPostgres("later leaves the run waiting (exit 3, the command to continue); Ctrl-C at the prompt of resume leaves it waiting (exit 3)", async () => {
    const ctx = context();
    const model = ctx.script("w.json", WRITE_SCRIPT);
    const later = spawnInPty(["run", "write a note"], { ...ctx.env, ...model }, { cwd: ctx.dir });
    await later.waitFor((out) => out.includes(PROMPT));
    later.write("l");
    const waiting = await later.exited;
    const runId = runIdFrom(screen(waiting.stdout));
    expect(waiting.code).toBe(3);
    expect(screen(waiting.stdout)).toContain(`  npx devmind approve ${runId}\n`);

    const resumed = spawnInPty(["resume", runId], { ...ctx.env, ...model }, { cwd: ctx.dir });
    await resumed.waitFor((out) => out.includes(PROMPT));
    resumed.write("\x03");
    const cancelled = await resumed.exited;
    // the Platform's model: the waiting run has ended, there is nothing to cancel; the thread still waits on it
    expect(cancelled.code).toBe(3);
    expect(screen(cancelled.stdout)).toContain(`run ${runId}: success (interrupt)`);
    expect(screen(cancelled.stdout)).toContain(`  npx devmind approve ${runId}\n`);
    expect(existsSync(join(ctx.workspace, "note.txt"))).toBe(false);
  }, 300_000);
});
