/**
 * The CLI with a project's own graphs (CONTRACT section 10): `devmind run --graph ID --input
 * JSON|@file` for any graph, a graph's interrupt answered with `devmind resume RUN_ID --value`, the
 * same run shown and its events listed; bad input refused with exit 2 before anything is stored.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CLI_BUNDLE } from "../../src/constants.js";
import { runCli, spawnCli } from "../helpers/cli.js";
import { BUILT_CLI } from "../setup/build-outputs.js";
import { cliContexts, ndjson } from "../helpers/cli-env.js";
import { CHILD_ENGINE } from "../helpers/databases.js";

const EXAMPLES = resolve(fileURLToPath(new URL("../../examples/", import.meta.url)));
const REVIEW_CONFIG = join(EXAMPLES, "approval-graph", "langgraph.json");
const RESEARCH_CONFIG = join(EXAMPLES, "parallel-research", "langgraph.json");
const HITL_CONFIG = join(EXAMPLES, "hitl-agent", "langgraph.json");
const ONE_COPY_GRAPH = fileURLToPath(new URL("../fixtures/graphs/one-copy.ts", import.meta.url));
const context = cliContexts();

// the CLI is above the runtime seam: both engines are covered below it (graph-runs, crons)
describe.each([CHILD_ENGINE])("devmind CLI with user graphs on %s", (backend) => {
  it("runs example (a) to its interrupt (exit 3), resumes it with --value in a new process, and shows it", async () => {
    const ctx = context(backend);
    const first = await runCli(["run", "--config", REVIEW_CONFIG, "--graph", "review", "--input", '{"topic":"durable runs"}', "--json"], ctx.env, { cwd: ctx.dir });
    expect(first.code, first.stderr).toBe(3);
    const lines = ndjson(first.stdout);
    const result = lines.at(-1) as { type: string; run_id: string; status: string };
    expect(result).toMatchObject({ type: "result", status: "interrupted" });
    expect(lines.filter((line) => line["type"] === "node.finished").map((line) => line["node"])).toEqual(["write", "review"]);
    expect(lines.find((line) => line["type"] === "run.interrupted")).toMatchObject({ interrupts: [{ value: { question: "Send this draft?", draft: "A short note about durable runs." } }] });
    expect(first.stderr).toContain(`resume ${result.run_id} --value`);

    const resumed = await runCli(["resume", result.run_id, "--config", REVIEW_CONFIG, "--value", '{"approved":true}', "--by", "alice", "--reason", "fine"], ctx.env, { cwd: ctx.dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/● review\s+\d+ ms/);
    expect(resumed.stdout).toContain("✓ succeeded");

    const shown = await runCli(["events", result.run_id], ctx.env, { cwd: ctx.dir });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("↪ resumed by alice: fine");
    const again = await runCli(["resume", result.run_id, "--config", REVIEW_CONFIG, "--value", "true"], ctx.env, { cwd: ctx.dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("already finished");
  });
  it("a TypeScript graph shares the CLI's LangGraph: one copy of each package, not a second one for the graph file", async () => {
    const ctx = context(backend);
    const config = join(ctx.dir, "one-copy.json");
    writeFileSync(config, JSON.stringify({ graphs: { probe: `${ONE_COPY_GRAPH}:graph` } }));
    const run = await runCli(["run", "--config", config, "--graph", "probe", "--input", "{}", "--json"], ctx.env, { cwd: ctx.dir });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(ndjson(run.stdout).at(-1)).toMatchObject({ type: "result", status: "success" });
  });
});

describe("devmind CLI with example (c): createAgent with HITL middleware", () => {
  it("pauses at the HITL request (exit 3), devmind approve in a new process continues it; the tool ran once", async () => {
    const ctx = context("pglite");
    const notes = join(ctx.dir, "notes.txt");
    const model = ctx.script("turns.json", [{ tool_calls: [{ id: "note", name: "append_line", args: { line: "durable runs" } }] }, { content: "noted" }]);
    const env = { ...ctx.env, ...model, NOTES_FILE: notes };
    const input = JSON.stringify({ messages: [{ role: "user", content: "note it" }] });
    const first = await runCli(["run", "--config", HITL_CONFIG, "--input", input], env, { cwd: ctx.dir });
    expect(first.code, first.stderr).toBe(3);
    expect(first.stdout).toContain('⏸ append_line(line="durable runs") needs approval');
    const runId = /run ([0-9a-f-]{36}): interrupted/.exec(first.stdout)?.[1] as string;
    expect(first.stdout).toContain(`approve ${runId}`);
    const approved = await runCli(["approve", runId, "--config", HITL_CONFIG, "--by", "hank", "--reason", "fine"], env, { cwd: ctx.dir });
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain("✓ succeeded");
    expect(readFileSync(notes, "utf8")).toBe("durable runs\n");
  });
});

describe("devmind CLI with user graphs: refusals", () => {
  it("the one-file CLI bundle refuses to load project graphs (it has its own LangGraph); the bin starts the separate modules for them", async () => {
    const ctx = context();
    const bundle = join(dirname(BUILT_CLI), CLI_BUNDLE.file);
    const direct = await spawnCli([], ctx.env, { cwd: ctx.dir, command: [process.execPath, [bundle, "graphs", "--config", REVIEW_CONFIG]] }).exited;
    expect(direct.code, direct.stderr).toBe(2);
    expect(direct.stderr).toContain("project graphs cannot load in the bundled CLI");
    expect(direct.stdout).toBe("");
    const viaBin = await runCli(["graphs", "--config", REVIEW_CONFIG, "--json"], ctx.env, { cwd: ctx.dir });
    expect(viaBin.code, viaBin.stderr).toBe(0);
    expect(ndjson(viaBin.stdout)).toEqual([
      { id: "review", source: expect.stringContaining("graph.ts"), status: "loaded", kind: expect.any(String), tool_nodes: [], tool_nodes_note: expect.stringMatching(/^no tool nodes/) },
    ]);
  });

  it("refuses an unknown graph, malformed --input, a task with --input, and --value on a run waiting for a map", async () => {
    const ctx = context();
    // independent refusals, side by side (each loads the project's graphs, then exits 2)
    const [unknown, malformed, both, missingFile] = await Promise.all([
      runCli(["run", "--config", REVIEW_CONFIG, "--graph", "nope", "--input", "{}"], ctx.env, { cwd: ctx.dir }),
      runCli(["run", "--config", REVIEW_CONFIG, "--graph", "review", "--input", "{topic"], ctx.env, { cwd: ctx.dir }),
      runCli(["run", "write it", "--config", REVIEW_CONFIG, "--input", "{}"], ctx.env, { cwd: ctx.dir }),
      runCli(["run", "--config", REVIEW_CONFIG, "--input", "@nowhere.json"], ctx.env, { cwd: ctx.dir }),
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no graph "nope" is loaded here; known: review');
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain("--input: not valid JSON");
    expect(both.code).toBe(2);
    expect(missingFile.code).toBe(2);
    expect(missingFile.stderr).toContain("--input: cannot read nowhere.json");
    const listed = await runCli(["runs", "--json"], ctx.env, { cwd: ctx.dir });
    expect(ndjson(listed.stdout)).toEqual([]);

    // two interrupts wait (example (b)): one --value without --interrupt is refused, each id is answered
    writeFileSync(join(ctx.dir, "questions.json"), JSON.stringify({ questions: ["abc", "abcde"] }));
    const started = await runCli(["run", "--config", RESEARCH_CONFIG, "--input", "@questions.json", "--json"], ctx.env, { cwd: ctx.dir });
    expect(started.code, started.stderr).toBe(3);
    const run = ndjson(started.stdout).find((line) => line["type"] === "run.interrupted") as { run_id: string; interrupts: { id: string }[] };
    expect(run.interrupts).toHaveLength(2);
    const ambiguous = await runCli(["resume", run.run_id, "--config", RESEARCH_CONFIG, "--value", '{"keep":true}'], ctx.env, { cwd: ctx.dir });
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain("2 interrupts are waiting");
    const one = await runCli(["resume", run.run_id, "--config", RESEARCH_CONFIG, "--interrupt", run.interrupts[0]?.id as string, "--value", '{"keep":true}', "--detach"], ctx.env, { cwd: ctx.dir });
    expect(one.code, one.stderr).toBe(3);
    const two = await runCli(["resume", run.run_id, "--config", RESEARCH_CONFIG, "--interrupt", run.interrupts[1]?.id as string, "--value", '{"keep":false}'], ctx.env, { cwd: ctx.dir });
    expect(two.code, two.stderr).toBe(0);
    expect(two.stdout).toContain("✓ succeeded");
  });
});
