/**
 * `devmind dev` (CONTRACT section 7): an edit of a module a graph imports, made while a run of the
 * graph waits in a node, reloads the graph in the running server; the run stops at its next
 * checkpoint and continues on the new code (`run.resumed {reason: "reload"}`), and completes with
 * what the new code computes. An edit that breaks the graph (a syntax error) keeps the old one
 * serving and says why on stderr, in `GET /dev/status` and on the page; the fix reloads, and so
 * does a change of the config's env file (its variables applied again).
 */
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../setup/build-outputs.js";
import { CHROMIUM_PATH, launchChromium } from "../helpers/browser.js";
import { seedDataDir } from "../helpers/pglite-template.js";
import { spawnServe, type ServeProcess } from "../helpers/server-process.js";
import { waitUntil } from "../helpers/waits.js";

const GRAPH = `import { existsSync } from "node:fs";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { LABEL } from "./label.js";

const State = Annotation.Root({ gate: Annotation<string>, result: Annotation<string> });

// "wait" holds the run until the test creates the gate file (bounded: 60 s)
export const graph = new StateGraph(State)
  .addNode("wait", async (state) => {
    for (let i = 0; i < 1200 && !existsSync(state.gate); i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    return {};
  })
  .addNode("finish", () => ({ result: LABEL + (process.env["DEV_SUFFIX"] ?? "") }))
  .addEdge(START, "wait")
  .addEdge("wait", "finish")
  .addEdge("finish", END)
  .compile();
`;

const label = (value: string): string => `export const LABEL: string = ${JSON.stringify(value)};\n`;

interface Project {
  dir: string;
  dev: ServeProcess;
  gate: string;
}

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A project with one graph (`slow`) whose `finish` node returns LABEL of src/label.ts, served by `devmind dev`. */
async function devProject(): Promise<Project> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "devmind-dev-")));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  // the project's packages are devmind's own (one copy of LangGraph, as an installed project has)
  symlinkSync(join(REPO_ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  writeFileSync(join(dir, "langgraph.json"), JSON.stringify({ graphs: { slow: "./src/graph.ts:graph" }, env: ".env" }));
  writeFileSync(join(dir, ".env"), "# DEV_SUFFIX is set by a test\n");
  writeFileSync(join(dir, "src", "graph.ts"), GRAPH);
  writeFileSync(join(dir, "src", "label.ts"), label("v1"));
  seedDataDir(join(dir, ".devmind"));
  const dev = await spawnServe(["--port", "0", "--workers", "2"], { DEVMIND_WORKSPACE: join(dir, "ws"), LOG_LEVEL: "warn" }, 120_000, { command: "dev", cwd: dir });
  cleanups.push(() => dev.stop());
  return { dir, dev, gate: join(dir, "gate") };
}

async function json<T>(response: Promise<Response>): Promise<T> {
  const answer = await response;
  expect(answer.status, await answer.clone().text()).toBeLessThan(300);
  return (await answer.json()) as T;
}

interface Run {
  run_id: string;
  thread_id: string;
  status: string;
}

const startRun = (project: Project): Promise<Run> =>
  json<Run>(fetch(`${project.dev.url}/runs`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ assistant_id: "slow", input: { gate: project.gate } }) }));

async function events(project: Project, runId: string): Promise<Record<string, unknown>[]> {
  const text = await (await fetch(`${project.dev.url}/runs/${runId}/events?follow=0`)).text();
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

async function finished(project: Project, runId: string): Promise<Run> {
  return waitUntil(
    `run ${runId} finished`,
    async () => {
      const run = await json<Run>(fetch(`${project.dev.url}/runs/${runId}`));
      return run.status !== "pending" && run.status !== "running" ? run : undefined;
    },
    60_000,
  );
}

const result = async (project: Project, threadId: string): Promise<unknown> => (await json<{ values: { result?: unknown } }>(fetch(`${project.dev.url}/threads/${threadId}/state`))).values.result;

const devStatus = (project: Project) => json<{ state: string; generation: number; handed_over: string[]; changed: string[]; error: { message: string; graph: string | null } | null }>(fetch(`${project.dev.url}/dev/status`));

describe("devmind dev", () => {
  it("an edit while a run waits in a node: the graph reloads, the run continues from its checkpoint on the new code and completes", async () => {
    const project = await devProject();
    expect(project.dev.stdout()).toMatch(/devmind dev: the page is http:\/\/127\.0\.0\.1:\d+\/ \(reloading on changes to \d+ project files\)/);
    const run = await startRun(project);
    await waitUntil("the run waits in node wait", async () => (await events(project, run.run_id)).some((event) => event.type === "node.started" && event.node === "wait"), 60_000);

    writeFileSync(join(project.dir, "src", "label.ts"), label("v2"));
    await waitUntil("the reload line", () => /reloaded 1 graph in \d+ ms after a change to src\/label\.ts; 1 running run continues/.test(project.dev.stdout()), 30_000);
    const status = await devStatus(project);
    expect(status).toMatchObject({ state: "ok", generation: 2, changed: ["src/label.ts"], handed_over: [run.run_id], error: null });

    writeFileSync(project.gate, "");
    const done = await finished(project, run.run_id);
    expect(done.status).toBe("success");
    expect(await result(project, run.thread_id)).toBe("v2");
    // the hand-over: `wait` finished on the old code, then the run resumed (reload) and `finish` ran once, on the new code
    const seen = (await events(project, run.run_id)).map((event) => (event.type === "run.resumed" ? `run.resumed:${String(event.reason)}` : String(event.type).startsWith("node.") ? `${event.type}:${String(event.node)}` : String(event.type)));
    expect(seen).toEqual(["run.created", "run.started", "node.started:wait", "node.finished:wait", "run.resumed:reload", "node.started:finish", "node.finished:finish", "run.succeeded"]);
  }, 240_000);

  it("an edit that removes the node a waiting run goes to next: the run ends GRAPH_NODE_GONE naming it, later runs use the new graph", async () => {
    const project = await devProject();
    const run = await startRun(project);
    await waitUntil("the run waits in node wait", async () => (await events(project, run.run_id)).some((event) => event.type === "node.started" && event.node === "wait"), 60_000);
    writeFileSync(join(project.dir, "src", "graph.ts"), GRAPH.replaceAll('"finish"', '"done"'));
    await waitUntil("the reload line", () => /reloaded 1 graph in \d+ ms after a change to src\/graph\.ts; 1 running run continues/.test(project.dev.stdout()), 30_000);
    writeFileSync(project.gate, "");
    const gone = await finished(project, run.run_id);
    expect(gone.status).toBe("error");
    const record = await json<{ error: { code: string; message: string } | null }>(fetch(`${project.dev.url}/runs/${run.run_id}`));
    expect(record.error?.code).toBe("GRAPH_NODE_GONE");
    expect(record.error?.message).toContain('"finish"');
    const next = await startRun(project);
    expect((await finished(project, next.run_id)).status).toBe("success");
    const nodes = (await events(project, next.run_id)).filter((event) => event.type === "node.started").map((event) => event["node"]);
    expect(nodes).toEqual(["wait", "done"]);
  }, 240_000);

  it("a syntax error keeps the old graph serving, said on stderr, in /dev/status and on the page; the fix reloads; so does an .env change", async () => {
    const project = await devProject();
    writeFileSync(project.gate, "");
    writeFileSync(join(project.dir, "src", "label.ts"), `export const LABEL: string = "v2" +;\n`);
    await waitUntil("the failure on stderr", () => /reload failed after a change to src\/label\.ts/.test(project.dev.stderr()), 30_000);
    expect(project.dev.stderr()).toContain("still serving the previous version of the graphs; fix the error and save again");
    expect(project.dev.stderr()).toMatch(/label\.ts:1:\d+: ERROR/);
    const failed = await devStatus(project);
    expect(failed).toMatchObject({ state: "error", generation: 1, changed: ["src/label.ts"], error: { graph: "slow" } });
    expect(failed.error?.message).toMatch(/label\.ts:1:\d+: ERROR/);

    // the old graph still runs
    const old = await startRun(project);
    expect((await finished(project, old.run_id)).status).toBe("success");
    expect(await result(project, old.thread_id)).toBe("v1");

    if (existsSync(CHROMIUM_PATH)) {
      const browser = await launchChromium();
      cleanups.push(() => browser.close());
      const page = await browser.newPage();
      await page.goto(`${project.dev.url}/`);
      const line = page.getByTestId("dev-status");
      await line.waitFor({ state: "visible", timeout: 30_000 });
      expect(await line.textContent()).toMatch(/Reload failed after a change to src\/label\.ts; still serving the previous version\.\n.*label\.ts:1:\d+: ERROR/s);
      await page.close();
    }

    writeFileSync(join(project.dir, "src", "label.ts"), label("v3"));
    await waitUntil("the reload after the fix", () => /reloaded 1 graph in \d+ ms after a change to src\/label\.ts/.test(project.dev.stdout()), 30_000);
    expect(await devStatus(project)).toMatchObject({ state: "ok", generation: 3, error: null });
    const fixed = await startRun(project);
    expect((await finished(project, fixed.run_id)).status).toBe("success");
    expect(await result(project, fixed.thread_id)).toBe("v3");

    // .env (the config's env file) changes: its variables are applied again and the graphs reload
    const reloads = project.dev.stdout().split("reloaded").length;
    writeFileSync(join(project.dir, ".env"), "DEV_SUFFIX=-from-env\n");
    await waitUntil("the reload after .env changed", () => project.dev.stdout().split("reloaded").length > reloads && /after a change to \.env/.test(project.dev.stdout()), 30_000);
    const withEnv = await startRun(project);
    expect((await finished(project, withEnv.run_id)).status).toBe("success");
    expect(await result(project, withEnv.thread_id)).toBe("v3-from-env");
  }, 240_000);
});
