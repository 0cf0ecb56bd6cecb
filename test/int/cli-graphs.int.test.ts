/**
 * The CLI with a project's own graphs (CONTRACT section 10): `devmind run --graph ID --input
 * JSON|@file` for any graph, a graph's interrupt answered with `devmind resume RUN_ID --value`, the
 * same run shown and its events listed; bad input (a graph with a node named like devmind's own
 * included) refused with exit 2 before anything is stored.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CLI_BUNDLE } from "../../src/constants.js";
import { runCli, spawnCli } from "../helpers/cli.js";
import { BUILT_CLI } from "../setup/build-outputs.js";
import { cliContexts, ndjson } from "../helpers/cli-env.js";
import { CHILD_ENGINE, itWithPostgres } from "../helpers/databases.js";

const EXAMPLES = resolve(fileURLToPath(new URL("../../examples/", import.meta.url)));
const REVIEW_CONFIG = join(EXAMPLES, "approval-graph", "langgraph.json");
const RESEARCH_CONFIG = join(EXAMPLES, "parallel-research", "langgraph.json");
const HITL_CONFIG = join(EXAMPLES, "hitl-agent", "langgraph.json");
const ONE_COPY_GRAPH = fileURLToPath(new URL("../fixtures/graphs/one-copy.ts", import.meta.url));
const TOOL_NODE_GRAPH = fileURLToPath(new URL("../fixtures/graphs/tool-node.ts", import.meta.url));
const GRAPHS_FIXTURE = fileURLToPath(new URL("../fixtures/graphs/graphs.ts", import.meta.url));
const context = cliContexts();

// the CLI is above the runtime seam: both engines are covered below it (graph-runs, crons)
describe.each([CHILD_ENGINE])("devmind CLI with user graphs on %s", (backend) => {
  itWithPostgres("runs example (a) to its interrupt (exit 3), resumes it with --value in a new process, and shows it", async () => {
    const ctx = context(backend);
    const first = await runCli(["run", "--config", REVIEW_CONFIG, "--graph", "review", "--input", '{"topic":"durable runs"}', "--json"], ctx.env, { cwd: ctx.dir });
    expect(first.code, first.stderr).toBe(3);
    const lines = ndjson(first.stdout);
    const result = lines.at(-1) as { type: string; run_id: string; status: string };
    // the Platform's model: the run ended at the interrupt
    expect(result).toMatchObject({ type: "result", status: "success", stop_reason: "interrupt" });
    expect(lines.filter((line) => line["type"] === "node.finished").map((line) => line["node"])).toEqual(["write", "review"]);
    expect(lines.find((line) => line["type"] === "run.interrupted")).toMatchObject({ interrupts: [{ value: { question: "Send this draft?", draft: "A short note about durable runs." } }] });
    // the result line carries the thread's values and what it waits on
    const waiting = { question: "Send this draft?", draft: "A short note about durable runs." };
    expect(result).toMatchObject({ values: { topic: "durable runs", draft: "A short note about durable runs.", outcome: null }, interrupts: [{ id: expect.any(String), value: waiting }], answer: null, model_rounds: 0, tool_calls: 0 });
    expect(first.stderr).toContain(`resume ${result.run_id} --value`);

    // show: the thread's values, next node and interrupt; no counters and no answer for a graph without them
    // one after the other: on the embedded database one process at a time opens it
    const paused = await runCli(["show", result.run_id, "--config", REVIEW_CONFIG], ctx.env, { cwd: ctx.dir });
    const pausedJson = await runCli(["show", result.run_id, "--config", REVIEW_CONFIG, "--json"], ctx.env, { cwd: ctx.dir });
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toMatch(new RegExp(`^run ${result.run_id}: success \\(interrupt\\) · 2 nodes · [\\d.]+ m?s\n`));
    expect(paused.stdout).toContain('values:\n  topic: "durable runs"\n  draft: "A short note about durable runs."\n  outcome: null\nnext: review\n');
    expect(paused.stdout).toMatch(/\nwaiting for a value: question="Send this draft\?", draft="A short note about[^\n]*  \[interrupt [^\]]+\]\n/);
    expect(paused.stdout).not.toMatch(/model round|answer/);
    const shownJson = ndjson(pausedJson.stdout)[0] as Record<string, unknown>;
    expect(shownJson).not.toHaveProperty("answer");
    expect(shownJson["state"]).toEqual({ values: { topic: "durable runs", draft: "A short note about durable runs.", outcome: null }, next: ["review"], interrupts: [{ id: expect.any(String), value: waiting }] });

    const resumed = await runCli(["resume", result.run_id, "--config", REVIEW_CONFIG, "--value", '{"approved":true}', "--by", "alice", "--reason", "fine"], ctx.env, { cwd: ctx.dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/● review\s+\d+ ms/);
    expect(resumed.stdout).toContain("✓ succeeded");
    // it ends with the graph's final values and a summary without counters the graph does not keep
    expect(resumed.stdout).toMatch(/✓ succeeded\nvalues:\n  topic: "durable runs"\n  draft: "A short note about durable runs\."\n  outcome: "sent: A short note about durable runs\."\nrun [0-9a-f-]{36}: success \(completed\) · \d+ nodes? · [\d.]+ m?s\n$/);

    const shown = await runCli(["events", result.run_id], ctx.env, { cwd: ctx.dir });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("↪ resumed by alice: fine");
    const again = await runCli(["resume", result.run_id, "--config", REVIEW_CONFIG, "--value", "true"], ctx.env, { cwd: ctx.dir });
    expect(again.code).toBe(2);
    // the resume was a new run: the thread no longer waits on this one
    expect(again.stderr).toContain("its thread no longer waits on it");
  });
  itWithPostgres("a TypeScript graph shares the CLI's LangGraph: one copy of each package, not a second one for the graph file", async () => {
    const ctx = context(backend);
    const config = join(ctx.dir, "one-copy.json");
    writeFileSync(config, JSON.stringify({ graphs: { probe: `${ONE_COPY_GRAPH}:graph` } }));
    const run = await runCli(["run", "--config", config, "--graph", "probe", "--input", "{}", "--json"], ctx.env, { cwd: ctx.dir });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(ndjson(run.stdout).at(-1)).toMatchObject({ type: "result", status: "success" });
  });

  itWithPostgres("a ToolNode graph: one folded line per tool call, its final values, and values/interrupts in the --json result", async () => {
    const ctx = context(backend);
    const config = join(ctx.dir, "tool-node.json");
    writeFileSync(config, JSON.stringify({ graphs: { research: `${TOOL_NODE_GRAPH}:graph` } }));
    const text = await runCli(["run", "--config", config, "--input", '{"query":"durable runs"}'], ctx.env, { cwd: ctx.dir });
    const json = await runCli(["run", "--config", config, "--input", '{"query":"durable runs"}', "--json"], ctx.env, { cwd: ctx.dir });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/\n✓ search\(query="durable runs"\)  \d+ ms\n/);
    expect(text.stdout).toMatch(/\n✗ fetch\(url="https:\/\/example\.invalid\/a"\)  the host of https:\/\/example\.invalid\/a is down  \d+ ms\n/);
    expect(text.stdout).toContain("\nvalues:\n  messages: 3 messages, last tool: ");
    expect(text.stdout).toContain('\n  query: "durable runs"\n  found: "search: found 3 pages about durable runs; fetch: Error: the host');
    expect(text.stdout).toMatch(/\nrun [0-9a-f-]{36}: success \(completed\) · 3 nodes · [\d.]+ m?s\n$/);
    expect(text.stdout).not.toContain("model round");

    expect(json.code, json.stderr).toBe(0);
    const lines = ndjson(json.stdout);
    const tools = lines.filter((line) => line["type"] === "tools").map((line) => (line["data"] as { event: string; name: string }).event + ":" + (line["data"] as { name: string }).name);
    expect(tools.sort()).toEqual(["on_tool_end:search", "on_tool_error:fetch", "on_tool_start:fetch", "on_tool_start:search"]);
    const result = lines.at(-1) as { values: { messages: { type: string }[]; query: string; found: string }; interrupts: unknown[] };
    expect(result).toMatchObject({ type: "result", status: "success", answer: null, interrupts: [], values: { query: "durable runs" } });
    expect(result.values.messages.map((message) => message.type)).toEqual(["ai", "tool", "tool"]);
    expect(result.values.found).toContain("search: found 3 pages about durable runs");
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
    const runId = /run ([0-9a-f-]{36}): success \(interrupt\)/.exec(first.stdout)?.[1] as string;
    expect(first.stdout).toContain(`approve ${runId}`);
    const approved = await runCli(["approve", runId, "--config", HITL_CONFIG, "--by", "hank", "--reason", "fine"], env, { cwd: ctx.dir });
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain("✓ succeeded");
    expect(readFileSync(notes, "utf8")).toBe("durable runs\n");
  });
});

describe("devmind CLI with user graphs: refusals", () => {
  itWithPostgres("the one-file CLI bundle refuses to load project graphs (it has its own LangGraph); the bin starts devmind's own modules bundled, LangGraph left to node_modules, for them", async () => {
    const ctx = context();
    const bundle = join(dirname(BUILT_CLI), CLI_BUNDLE.file);
    const direct = await spawnCli([], ctx.env, { cwd: ctx.dir, command: [process.execPath, [bundle, "graphs", "--config", REVIEW_CONFIG]] }).exited;
    expect(direct.code, direct.stderr).toBe(2);
    expect(direct.stderr).toContain("project graphs cannot load in the bundled CLI");
    expect(direct.stdout).toBe("");
    // the bundle the bin starts for graphs imports LangGraph and LangChain where the graph does
    const graphsBundle = readFileSync(join(dirname(BUILT_CLI), CLI_BUNDLE.graphsFile), "utf8");
    expect(graphsBundle).toMatch(/from ?"@langchain\/langgraph"/);
    expect(graphsBundle).toMatch(/from ?"@langchain\/core\/[a-z_/]+"/);
    const viaBin = await runCli(["graphs", "--config", REVIEW_CONFIG, "--json"], ctx.env, { cwd: ctx.dir });
    expect(viaBin.code, viaBin.stderr).toBe(0);
    expect(ndjson(viaBin.stdout)).toEqual([
      { id: "review", source: expect.stringContaining("graph.ts"), status: "loaded", kind: expect.any(String), tool_nodes: [], tool_nodes_note: expect.stringMatching(/^no tool nodes/) },
    ]);
  });

  itWithPostgres("refuses an unknown graph, malformed --input, a task with --input, and --value on a run waiting for a map", async () => {
    const ctx = context();
    // a graph with a node named like devmind's own
    const reservedConfig = join(ctx.dir, "reserved.json");
    writeFileSync(reservedConfig, JSON.stringify({ graphs: { reserved: `${GRAPHS_FIXTURE}:reservedName` } }));
    // independent refusals, side by side (each loads the project's graphs, then exits 2)
    const [unknown, malformed, both, missingFile, reserved] = await Promise.all([
      runCli(["run", "--config", REVIEW_CONFIG, "--graph", "nope", "--input", "{}"], ctx.env, { cwd: ctx.dir }),
      runCli(["run", "--config", REVIEW_CONFIG, "--graph", "review", "--input", "{topic"], ctx.env, { cwd: ctx.dir }),
      runCli(["run", "write it", "--config", REVIEW_CONFIG, "--input", "{}"], ctx.env, { cwd: ctx.dir }),
      runCli(["run", "--config", REVIEW_CONFIG, "--input", "@nowhere.json"], ctx.env, { cwd: ctx.dir }),
      runCli(["run", "--config", reservedConfig, "--graph", "reserved", "--input", "{}"], ctx.env, { cwd: ctx.dir }),
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no graph "nope" is loaded here; known: review');
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain("--input: not valid JSON");
    expect(both.code).toBe(2);
    expect(missingFile.code).toBe(2);
    expect(missingFile.stderr).toContain("--input: cannot read nowhere.json");
    expect(reserved.code).toBe(2);
    expect(reserved.stderr).toMatch(/graph reserved \(.*graphs\.ts\): node "__summary" has a name reserved for LangGraph and devmind/);
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
