import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliCommandLine, runCli, spawnCli } from "../helpers/cli.js";
import { cliContexts, ndjson } from "../helpers/cli-env.js";
import { CHILD_ENGINE, itWithPostgres } from "../helpers/databases.js";

const context = cliContexts();

/** Bad input is refused before the database is opened: the data directory is never created. */
describe("devmind bad input: one line, a usage hint, exit 2, nothing touched", () => {
  it("refuses unknown commands and flags, missing tasks, bad flag values and bad --args", async () => {
    const ctx = context("pglite", { seeded: false });
    const model = ctx.script("answer.json", [{ content: "hi" }]);
    const env = { ...ctx.env, ...model };
    const cases: [string[], RegExp][] = [
      [["frobnicate"], /unknown command 'frobnicate'/],
      [["run", "x", "--bogus"], /unknown option '--bogus'/],
      [["run"], /missing task/],
      [["run", "   "], /missing task/],
      [["run", "x", "--max-model-rounds", "0"], /--max-model-rounds must be an integer from 1 to/],
      [["run", "x", "--max-tool-calls", "lots"], /--max-tool-calls must be an integer/],
      [["run", "x", "--model", "bogus:thing"], /--model: expected "openai:NAME", "scripted:PATH" or a bare model name/],
      [["runs", "--status", "sleeping"], /--status must be one of pending, running/],
      [["runs", "--limit", "-3"], /--limit must be an integer/],
      [["approve"], /missing required argument 'run_id'/],
      [["approve", "00000000-0000-4000-8000-000000000000", "--args", "{not json"], /--args is not valid JSON/],
      [["approve", "00000000-0000-4000-8000-000000000000", "--args", "[1,2]"], /--args must be a JSON object/],
      [["worker", "--concurrency", "many"], /--concurrency must be an integer/],
    ];
    // independent processes that never open the database: run them side by side
    const results = await Promise.all(cases.map(([args]) => runCli(args, env, { cwd: ctx.dir, timeoutMs: 240_000 })));
    for (const [index, [args, message]] of cases.entries()) {
      const result = results[index] as Awaited<ReturnType<typeof runCli>>;
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr, args.join(" ")).toMatch(message);
      expect(result.stderr, args.join(" ")).toContain("(add --help for usage)");
      expect(result.stdout, args.join(" ")).toBe("");
    }
    expect(existsSync(join(ctx.dir, "data"))).toBe(false);
  }, 300_000);

  it("exits 2 naming what to set when no model is configured, the script file is unreadable, or a variable is invalid", async () => {
    const ctx = context("pglite", { seeded: false });
    const none = await runCli(["run", "hello"], ctx.env, { cwd: ctx.dir });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("No model is configured");
    expect(none.stderr).toContain("OPENAI_API_KEY");
    const missing = await runCli(["run", "hello"], { ...ctx.env, DEVMIND_MODEL: `scripted:${join(ctx.dir, "nope.json")}` }, { cwd: ctx.dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/Scripted model file .*nope\.json not found \[SCRIPT_INVALID\]/);
    const broken = ctx.script("broken.json", [{ content: "x" }]);
    const invalid = await runCli(["run", "hello"], { ...ctx.env, ...broken, DEVMIND_MAX_MODEL_ROUNDS: "many", DEVMIND_PORT: "99999" }, { cwd: ctx.dir });
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('DEVMIND_MAX_MODEL_ROUNDS: expected an integer from 1 to 1000, got "many"');
    expect(invalid.stderr).toContain("DEVMIND_PORT");
    const worker = await runCli(["worker"], ctx.env, { cwd: ctx.dir });
    expect(worker.code).toBe(2);
    expect(worker.stderr).toContain("OPENAI_API_KEY");
    expect(existsSync(join(ctx.dir, "data"))).toBe(false);
  }, 300_000);

  itWithPostgres("exits 1 when the run ends in error: the model fails, or a run limit stops it (stop reason in the result line)", async () => {
    const ctx = context();
    const failing = ctx.script("fails.json", [{ error: "the provider is down" }]);
    const failed = await runCli(["run", "hello", "--json"], { ...ctx.env, ...failing }, { cwd: ctx.dir, timeoutMs: 240_000 });
    expect(failed.code).toBe(1);
    const failedLines = ndjson(failed.stdout);
    expect(failedLines.at(-1)).toMatchObject({ type: "result", status: "error", stop_reason: "model_failed", model_rounds: 0, tool_calls: 0 }); // a failed call is not a completed round
    expect(failedLines.map((line) => line["type"])).toContain("model.failed");
    const looping = ctx.script("loops.json", [
      { tool_calls: [{ id: "a1", name: "add", args: { a: 1, b: 1 } }] },
      { tool_calls: [{ id: "a2", name: "add", args: { a: 2, b: 1 } }] },
      { content: "never reached" },
    ]);
    const limited = await runCli(["run", "count", "--json", "--max-model-rounds", "1"], { ...ctx.env, ...looping }, { cwd: ctx.dir, timeoutMs: 240_000 });
    expect(limited.code).toBe(1);
    expect(ndjson(limited.stdout).at(-1)).toMatchObject({ type: "result", status: "error", stop_reason: "max_model_rounds", model_rounds: 1, tool_calls: 1 });
  }, 300_000);

  itWithPostgres("reads the task from stdin; a run that waits has ended (nothing to cancel), a new run on its thread is taken and can be cancelled", async () => {
    const ctx = context();
    const model = ctx.script("write.json", [{ tool_calls: [{ id: "w", name: "write_file", args: { path: "a.txt", content: "a" } }] }, { content: "ok" }]);
    const child = spawnCli(["run", "--json"], { ...ctx.env, ...model }, { cwd: ctx.dir });
    child.write("write a.txt\n");
    child.endInput();
    const first = await child.exited;
    expect(first.code).toBe(3);
    const result = ndjson(first.stdout).at(-1) as Record<string, unknown>;
    // the Platform's model: the run ended at the interrupt; its thread waits on it
    expect(result).toMatchObject({ type: "result", status: "success", stop_reason: "interrupt" });
    const ended = await runCli(["cancel", String(result["run_id"])], ctx.env, { cwd: ctx.dir });
    expect(ended.code).toBe(0);
    expect(ended.stdout).toBe(`run ${String(result["run_id"])} already finished (success); nothing to cancel\n`);
    // a new run on the waiting thread is taken (queued here), and cancelled
    const second = await runCli(["run", "again", "--thread", String(result["thread_id"]), "--detach"], { ...ctx.env, ...model }, { cwd: ctx.dir });
    expect(second.code).toBe(0);
    expect(second.stderr).toContain(`queued on thread ${String(result["thread_id"])}`);
    const [queued] = ndjson((await runCli(["runs", "--json"], ctx.env, { cwd: ctx.dir })).stdout);
    const secondId = String(queued?.["run_id"]);
    expect(secondId).not.toBe(String(result["run_id"]));
    const cancel = await runCli(["cancel", secondId], ctx.env, { cwd: ctx.dir });
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toBe(`run ${secondId} cancelled\n`);
    const runs = await runCli(["runs", "--json"], ctx.env, { cwd: ctx.dir });
    expect(ndjson(runs.stdout).map((run) => [run["status"], run["stop_reason"]])).toEqual([
      ["interrupted", "cancelled"],
      ["success", "interrupt"],
    ]);
    expect(ndjson(runs.stdout)[1]?.["input"]).toEqual({ messages: ["write a.txt"] });
    const table = await runCli(["runs", "--status", "interrupted", "--limit", "5"], ctx.env, { cwd: ctx.dir });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`^${secondId}  interrupted +cancelled +0r/0t +\\d{4}-\\d\\d-\\d\\dT[\\d:]{8}  again\n$`));
  }, 300_000);
});

describe.each([CHILD_ENGINE])("devmind output into a pipe closed early on %s", (backend) => {
  it("`show ID | head -3`, `events ID --json | head -1` and output into a closed pipe end quietly: exit 0, no stack trace", async () => {
    const ctx = context(backend);
    const model = ctx.script("add.json", [{ tool_calls: [{ id: "c1", name: "add", args: { a: 2, b: 3 } }] }, { content: "five" }]);
    const run = await runCli(["run", "add 2 and 3", "--json"], { ...ctx.env, ...model }, { cwd: ctx.dir });
    expect(run.code).toBe(0);
    const runId = String(ndjson(run.stdout).at(-1)?.["run_id"]);
    const cases = [
      [["show", runId], "head -3"],
      [["events", runId, "--json"], "head -1"],
      // a reader gone before the first write: every write fails with EPIPE
      [["show", runId, "--verbose"], "true"],
      [["events", runId, "--json"], "true"],
    ] as const;
    const pipeline = (args: readonly string[], reader: string, index: number) => {
      const errFile = join(ctx.dir, `stderr-${index}.txt`);
      const line = `${cliCommandLine([...args])} 2>${errFile} | ${reader}; exit "\${PIPESTATUS[0]}"`;
      return spawnCli([], ctx.env, { cwd: ctx.dir, command: ["bash", ["-c", line]] }).exited.then((result) => ({ result, errFile }));
    };
    // on PostgreSQL the four pipelines side by side; an embedded database serves one process at a
    // time (a second one exits 2, "in use by process …"), so there one after the other
    const piped: Awaited<ReturnType<typeof pipeline>>[] = [];
    if (backend === "postgres") piped.push(...(await Promise.all(cases.map(([args, reader], index) => pipeline(args, reader, index)))));
    else for (const [index, [args, reader]] of cases.entries()) piped.push(await pipeline(args, reader, index));
    for (const [index, [args, reader]] of cases.entries()) {
      const { result, errFile } = piped[index] as (typeof piped)[number];
      const what = `${args.join(" ")} | ${reader}`;
      expect(readFileSync(errFile, "utf8"), what).toBe("");
      expect(result.code, what).toBe(0);
      if (reader !== "true") expect(result.stdout.trim().split("\n").length, what).toBeGreaterThan(0);
    }
  }, 300_000);

  it("`run … | head -1` and `run … | true` never leave an orphan: the run goes on to its next stop in this process, and the exit code is its status's", async () => {
    const ctx = context(backend);
    const adds = ctx.script("add.json", [{ tool_calls: [{ id: "c1", name: "add", args: { a: 2, b: 3 } }] }, { content: "five" }]);
    const writes = ctx.script("write.json", [{ tool_calls: [{ id: "w1", name: "write_file", args: { path: "a.txt", content: "a" } }] }, { content: "written" }]);
    const cases = [
      // the reader takes the first line (the run's intro) and goes away; the timeline continues into a closed pipe
      { task: "add 2 and 3", model: adds, reader: "head -1", code: 0, status: "success", stop: "completed" },
      // a reader gone before the first write: every line of the run fails with EPIPE
      { task: "add 2 and 3", model: adds, reader: "true", code: 0, status: "success", stop: "completed" },
      // the next stop is the approval: the run ends at the interrupt (exit 3; its thread waits), leased by nobody
      { task: "write a.txt", model: writes, reader: "true", code: 3, status: "success", stop: "interrupt" },
    ];
    const stderrs: string[] = [];
    // one after the other: on PGlite one process at a time holds the database
    for (const [index, { task, model, reader, code }] of cases.entries()) {
      const errFile = join(ctx.dir, `run-stderr-${index}.txt`);
      const line = `${cliCommandLine(["run", task])} 2>${errFile} | ${reader}; exit "\${PIPESTATUS[0]}"`;
      const result = await spawnCli([], { ...ctx.env, ...model }, { cwd: ctx.dir, command: ["bash", ["-c", line]] }).exited;
      const stderr = readFileSync(errFile, "utf8");
      stderrs.push(stderr);
      expect(result.code, `${task} | ${reader}: ${stderr}`).toBe(code);
      expect(stderr, `${task} | ${reader}`).not.toMatch(/EPIPE|at .*\.js:\d+/);
    }
    // the reader gone before the first write: the note names the run that goes on
    for (const index of [1, 2]) expect(stderrs[index]).toMatch(/^devmind: output closed; run [0-9a-f-]{36} continues in this process to its next stop/m);
    const runs = await runCli(["runs", "--json"], ctx.env, { cwd: ctx.dir });
    // newest first; none is left pending or running, none holds a lease
    const listed = ndjson(runs.stdout);
    expect(listed.map((run) => [run["status"], run["stop_reason"]])).toEqual(cases.map((item) => [item.status, item.stop]).reverse());
    expect(listed.map((run) => run["lease"])).toEqual([null, null, null]);
  }, 300_000);
});

describe("devmind --version", () => {
  it("--version prints the package version", async () => {
    const version = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
    for (const flag of ["--version", "-V"]) {
      const result = await runCli([flag], {});
      expect(result.code, flag).toBe(0);
      expect(result.stdout, flag).toBe(`${version}\n`);
    }
  }, 120_000);
});
