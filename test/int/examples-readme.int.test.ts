/**
 * Every example runs offline as shipped, as its README says: each `npx devmind …` line of the
 * README's shell block runs through the built CLI in the example's folder (RUN_ID replaced by the
 * run the last `devmind run` started) and ends with the exit code its comment names; then what
 * the example promises holds (the line appended once, the report, the counts `devmind runs` shows).
 * Only the data directory (a temp one) and the notes file are the test's own.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCli, type CliResult } from "../helpers/cli.js";
import { cliContexts, runIdFrom } from "../helpers/cli-env.js";

const EXAMPLES = resolve(fileURLToPath(new URL("../../examples/", import.meta.url)));
const context = cliContexts();
/** Example folders that are apps with tests of their own, not graph projects run by the CLI: the Vite + React chat. */
const APPS = new Set(["react-chat"]);

/** One `npx devmind …` line of an example's README: its arguments and the exit code its comment names. */
interface ReadmeCommand {
  line: string;
  args: string[];
  exit: number;
}

/** The `npx devmind` lines of the README's first shell block, after its `cd examples/NAME`. */
function readmeCommands(example: string): ReadmeCommand[] {
  const readme = readFileSync(join(EXAMPLES, example, "README.md"), "utf8");
  const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  const lines = block.split("\n").filter((line) => line.trim() !== "");
  expect(lines[0]?.trim()).toBe(`cd examples/${example}`);
  return lines.slice(1).map((line) => {
    const [code = "", comment = ""] = splitComment(line);
    const words = shellWords(code);
    expect(words.slice(0, 2), line).toEqual(["npx", "devmind"]);
    const exit = /^exit (\d)\b/.exec(comment.trim())?.[1];
    expect(exit, `${line}: its comment names no exit code`).toBeDefined();
    return { line, args: words.slice(2), exit: Number(exit) };
  });
}

/** The command and its `# comment` (a `#` outside quotes). */
function splitComment(line: string): [string, string] {
  let quote: string | null = null;
  for (let index = 0; index < line.length; index += 1) {
    const char = line[index] as string;
    if (quote !== null) {
      if (char === quote) quote = null;
    } else if (char === "'" || char === '"') quote = char;
    else if (char === "#") return [line.slice(0, index), line.slice(index + 1)];
  }
  return [line, ""];
}

/** Words as sh splits them: single and double quotes, no expansions (the READMEs use none). */
function shellWords(text: string): string[] {
  const words: string[] = [];
  for (const match of text.matchAll(/'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g)) {
    words.push(match[1] ?? (match[2] === undefined ? (match[3] as string) : match[2].replace(/\\(.)/g, "$1")));
  }
  return words;
}

/** Runs an example's README commands in its folder; returns each command's result. */
async function runReadme(example: string, env: Record<string, string>): Promise<CliResult[]> {
  const results: CliResult[] = [];
  let runId: string | undefined;
  for (const command of readmeCommands(example)) {
    const args = command.args.map((word) => (word === "RUN_ID" ? (runId ?? "no-run-yet") : word));
    const result = await runCli(args, env, { cwd: join(EXAMPLES, example) });
    expect(result.code, `${command.line}\n${result.stdout}\n${result.stderr}`).toBe(command.exit);
    if (args[0] === "run") runId = runIdFrom(result.stdout);
    results.push(result);
  }
  return results;
}

describe("examples run offline as their READMEs say", () => {
  it("every example folder has a README with commands, and a langgraph.json", () => {
    const examples = readdirSync(EXAMPLES, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !APPS.has(entry.name))
      .map((entry) => entry.name);
    expect(examples.sort()).toEqual(["approval-graph", "hitl-agent", "model-tools-interrupt", "parallel-research"]);
    for (const example of examples) {
      expect(readmeCommands(example).length).toBeGreaterThanOrEqual(3);
      expect(JSON.parse(readFileSync(join(EXAMPLES, example, "langgraph.json"), "utf8"))).toHaveProperty("graphs");
    }
  });

  it("approval-graph: run waits at interrupt() and names resume --value, resume finishes", async () => {
    const ctx = context("pglite");
    const [graphs, run, resumed] = await runReadme("approval-graph", ctx.env);
    expect(graphs?.stdout).toContain("review");
    const runId = runIdFrom(run?.stdout ?? "");
    expect(`${run?.stdout}${run?.stderr}`).toContain(`resume ${runId} --value`);
    expect(resumed?.stdout).toContain('outcome: "sent: A short note about durable runs."');
  });

  it("approval-graph: approve (or reject) on its plain interrupt() exits 2 naming `resume RUN --value JSON`; nothing is decided, resume still answers it", async () => {
    const ctx = context("pglite");
    const cwd = join(EXAMPLES, "approval-graph");
    const run = await runCli(["run", "--graph", "review", "--input", '{"topic":"x"}'], ctx.env, { cwd });
    expect(run.code, run.stderr).toBe(3);
    const runId = runIdFrom(run.stdout);
    const approve = await runCli(["approve", runId], ctx.env, { cwd });
    const reject = await runCli(["reject", runId, "--reason", "no"], ctx.env, { cwd });
    for (const [result, verb] of [[approve, "approve"], [reject, "reject"]] as const) {
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(`run ${runId} waits at an interrupt() that is not an approval request, so there is nothing to ${verb}`);
      expect(result.stderr).toContain(`resume ${runId} --value JSON`);
      expect(result.stderr).toContain('"Send this draft?"');
    }
    const resumed = await runCli(["resume", runId, "--value", '{"approved":false}'], ctx.env, { cwd });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('outcome: "dropped"');
  });

  it("parallel-research: one uncertain branch waits, resume keeps it and the report joins both", async () => {
    const ctx = context("pglite");
    const [, run, resumed] = await runReadme("parallel-research", ctx.env);
    expect(run?.stdout).toContain("durable -> unsure");
    expect(resumed?.stdout).toContain('report: "durable -> unsure (confirmed); runs -> sure"');
  });

  it("hitl-agent: its own turns.json drives it offline; approve appends the line once; runs counts rounds and calls", async () => {
    const ctx = context("pglite");
    const notes = join(ctx.dir, "notes.txt");
    const [graphs, run, approved, runs] = await runReadme("hitl-agent", { ...ctx.env, NOTES_FILE: notes });
    expect(graphs?.stdout).toContain("notes");
    expect(run?.stdout).toContain('append_line(line="runs are durable") needs approval');
    expect(approved?.stdout).toContain('Noted: runs are durable');
    expect(readFileSync(notes, "utf8")).toBe("runs are durable\n");
    // newest first: the resumed run ran both tools and the second model round; the first, one round
    const lines = (runs?.stdout ?? "").trim().split("\n");
    expect(lines.map((line) => /\s(\d+r\/\d+t)\s/.exec(line)?.[1])).toEqual(["1r/2t", "1r/0t"]);
  });

  it("model-tools-interrupt: the model's calls wait at review's interrupt(); approved, the ToolNode runs them once and the model answers", async () => {
    const ctx = context("pglite");
    const [graphs, run, resumed, runs] = await runReadme("model-tools-interrupt", ctx.env);
    expect(graphs?.stdout).toContain("tool node tools (ToolNode): add [ledgered], multiply [ledgered]");
    expect(run?.stdout).toContain('question="Run these tool calls?"');
    expect(resumed?.stdout).toMatch(/✓ add\(a=2, b=3\)[\s\S]*✓ multiply\(a=5, b=4\)/);
    expect(resumed?.stdout).toContain('last ai: "2 + 3 = 5, and 5 × 4 = 20."');
    const lines = (runs?.stdout ?? "").trim().split("\n");
    expect(lines.map((line) => /\s(\d+r\/\d+t)\s/.exec(line)?.[1])).toEqual(["1r/2t", "1r/0t"]);
  });

  it("model-tools-interrupt: rejected, no tool runs and the model reads the reason in each call's tool message", async () => {
    const ctx = context("pglite");
    const cwd = join(EXAMPLES, "model-tools-interrupt");
    const input = JSON.stringify({ messages: [{ role: "user", content: "what is 2 + 3, and 5 × 4?" }] });
    const run = await runCli(["run", "--graph", "calculator", "--input", input], ctx.env, { cwd });
    expect(run.code, run.stderr).toBe(3);
    const resumed = await runCli(["resume", runIdFrom(run.stdout), "--value", '{"approved": false, "reason": "not now"}', "--json"], ctx.env, { cwd });
    expect(resumed.code, resumed.stderr).toBe(0);
    const result = JSON.parse(resumed.stdout.trim().split("\n").at(-1) as string) as { values: { messages: { type?: string; content: unknown; tool_call_id?: string }[] } };
    const tools = resumed.stdout.split("\n").filter((line) => line.includes('"tool.call.started"'));
    expect(tools).toEqual([]);
    const refusals = result.values.messages.filter((message) => message.tool_call_id !== undefined).map((message) => [message.tool_call_id, message.content]);
    expect(refusals).toEqual([
      ["call_add", "rejected by the reviewer: not now"],
      ["call_multiply", "rejected by the reviewer: not now"],
    ]);
  });
});
