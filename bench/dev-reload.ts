/**
 * `npm run bench -- dev-reload [--edits N]`: how long `devmind dev` takes from an edit of a module
 * a graph imports to the new graph serving. A temporary project (one graph importing one helper
 * module) is served by the built `devmind dev`; each edit rewrites the helper, and the time is
 * taken from the write to the `reloaded … in X ms` line on stdout (which includes the watcher's
 * debounce, DEV_DEFAULTS.reloadDebounceMs), then checked by a run returning the new value.
 * Prints one table row per figure (median and max over the edits), with the reloader's own figure.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { DEV_DEFAULTS } from "../src/constants.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(ROOT, "dist", "src", "cli", "main.js");

const GRAPH = `import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { LABEL } from "./label.js";
const State = Annotation.Root({ result: Annotation<string> });
export const graph = new StateGraph(State).addNode("finish", () => ({ result: LABEL })).addEdge(START, "finish").addEdge("finish", END).compile();
`;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** Runs the bench; resolves to the exit code. */
export async function runDevReloadBench(args: readonly string[]): Promise<number> {
  const at = args.indexOf("--edits");
  const edits = at >= 0 ? Number(args[at + 1]) : 10;
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "devmind-bench-dev-")));
  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  writeFileSync(join(dir, "langgraph.json"), JSON.stringify({ graphs: { g: "./src/graph.ts:graph" } }));
  writeFileSync(join(dir, "src", "graph.ts"), GRAPH);
  writeFileSync(join(dir, "src", "label.ts"), `export const LABEL = "v0";\n`);
  const child = spawn(process.execPath, [CLI, "dev", "--port", "0", "--workers", "1"], { cwd: dir, env: { PATH: process.env["PATH"] ?? "", LOG_LEVEL: "warn", DEVMIND_WORKSPACE: join(dir, "ws") }, stdio: ["ignore", "pipe", "inherit"] });
  let stdout = "";
  const waiters: (() => void)[] = [];
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    for (const wake of waiters.splice(0)) wake();
  });
  const waitFor = async (pattern: RegExp, from: number): Promise<RegExpExecArray> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const match = pattern.exec(stdout.slice(from));
      if (match !== null) return match;
      if (Date.now() > deadline) throw new Error(`no ${String(pattern)} within 60 s; stdout: ${stdout}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 1_000);
      });
    }
  };
  try {
    const url = (await waitFor(/listening on (http:\/\/\S+) /, 0))[1] as string;
    const wall: number[] = [];
    const own: number[] = [];
    for (let edit = 1; edit <= edits; edit += 1) {
      const from = stdout.length;
      const written = performance.now();
      writeFileSync(join(dir, "src", "label.ts"), `export const LABEL = "v${edit}";\n`);
      const line = await waitFor(/reloaded 1 graph in (\d+) ms/, from);
      wall.push(performance.now() - written);
      own.push(Number(line[1]));
      const response = await fetch(`${url}/runs/wait`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ assistant_id: "g", input: {} }) });
      const values = (await response.json()) as { result?: string };
      if (values.result !== `v${edit}`) throw new Error(`edit ${edit}: the run returned ${JSON.stringify(values)}`);
    }
    console.log(`| figure | median | max | edits |\n|---|---|---|---|`);
    console.log(`| edit -> "reloaded" line (wall, ms) | ${median(wall).toFixed(0)} | ${Math.max(...wall).toFixed(0)} | ${edits} |`);
    console.log(`| reload as devmind dev reports it (ms, incl. the ${DEV_DEFAULTS.reloadDebounceMs} ms debounce) | ${median(own)} | ${Math.max(...own)} | ${edits} |`);
    return 0;
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("close", resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}
