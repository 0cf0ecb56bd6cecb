/**
 * The package as a user installs it: `npm pack` of this checkout (its built dist/, as `npm run
 * build` left it), `npm install` of the tarball into a new project (from npm's cache: the
 * checkout's install put every dependency there), then the project's first `devmind run`. npm
 * keeps files only, so the template's empty directories are not in the tarball; the first
 * command still copies the template (no initdb line), and the project holds one PGlite. A copy of
 * LangGraph the project resolves beside devmind's is warned about, naming both.
 */
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../setup/build-outputs.js";

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** npm's settings a user may have given `npm test` (its cache, registry, config file): npm and the install use them too. */
const NPM_SETTINGS = Object.fromEntries(
  ["npm_config_cache", "npm_config_registry", "npm_config_userconfig", "npm_config_offline"].flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name] as string]])),
);

/** Runs a command to its end (bounded), with PATH, HOME and npm's settings only from this process. */
function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 300_000): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd, env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? tmpdir(), ...NPM_SETTINGS, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
  });
}

/** Every installed package.json named `name` under `dir`'s node_modules, nested ones included. */
function installedCopies(dir: string, name: string): string[] {
  const found: string[] = [];
  const walk = (modules: string): void => {
    if (!existsSync(modules)) return;
    for (const entry of readdirSync(modules)) {
      const scoped = entry.startsWith("@") ? readdirSync(join(modules, entry)).map((inner) => join(entry, inner)) : [entry];
      for (const pkg of scoped) {
        const folder = join(modules, pkg);
        if (pkg === name) found.push(folder);
        walk(join(folder, "node_modules"));
      }
    }
  };
  walk(join(dir, "node_modules"));
  return found;
}

describe("the packed package installed into a new project", () => {
  let dir: string;
  let project: string;
  const devmind = (): string => join(project, "node_modules", ".bin", "devmind");

  beforeAll(async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "devmind-packed-")));
    // dist/ is current (the global setup built it): pack it as it is
    const packed = await run("npm", ["pack", "--ignore-scripts", "--pack-destination", dir], REPO_ROOT);
    expect(packed.code, packed.stderr).toBe(0);
    const tarball = readdirSync(dir).find((name) => name.endsWith(".tgz")) as string;
    project = join(dir, "project");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "packed-project", private: true, type: "module" }));
    const installed = await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", join(dir, tarball)], project);
    expect(installed.code, installed.stderr).toBe(0);
    // a project of the user's: example (a) beside its langgraph.json
    for (const file of ["graph.ts", "langgraph.json"]) cpSync(join(REPO_ROOT, "examples", "approval-graph", file), join(project, file));
  }, 600_000);
  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("its first command copies the template that lost its empty directories in the tarball: no initdb, a database that opens", async () => {
    const template = join(project, "node_modules", "devmind", "dist", "pglite-template");
    // what npm pack does to the template: its files are there, its empty directories are not
    expect(existsSync(join(template, "pgdata", "PG_VERSION"))).toBe(true);
    expect(existsSync(join(template, "pgdata", "pg_notify"))).toBe(false);
    const first = await run(devmind(), ["run", "--graph", "review", "--input", '{"topic":"durable runs"}'], project, { DEVMIND_DATA_DIR: join(project, ".devmind") });
    expect(first.code, first.stdout + first.stderr).toBe(3);
    expect(first.stderr).not.toContain("initdb");
    expect(first.stdout).toContain("● write");
    expect(existsSync(join(project, ".devmind", "pgdata", "pg_notify"))).toBe(true);
    console.log(`[packed install] first devmind run in a new project: ${(first.ms / 1000).toFixed(2)} s wall (exit ${first.code})`);
    const runs = await run(devmind(), ["runs"], project, { DEVMIND_DATA_DIR: join(project, ".devmind") });
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout).toMatch(/ success +interrupt /);
  });

  it("a first command loads no module of what it does not use: the OpenAI client, ws, pg, prom-client, cron-parser", async () => {
    // every module file the process loads (ESM, and CommonJS entered by an import), recorded by a loader hook
    const loaded = join(dir, "loaded.txt");
    writeFileSync(join(dir, "record-hooks.mjs"), `import { appendFileSync } from "node:fs";\nexport async function load(url, context, next) { appendFileSync(${JSON.stringify(loaded)}, url + "\\n"); return next(url, context); }\n`);
    writeFileSync(join(dir, "record.mjs"), `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(join(dir, "record-hooks.mjs")).href)});\n`);
    const first = await run(devmind(), ["run", "--graph", "review", "--input", '{"topic":"what loads"}'], project, { DEVMIND_DATA_DIR: join(dir, "data-loads"), NODE_OPTIONS: `--import ${pathToFileURL(join(dir, "record.mjs")).href}` });
    expect(first.code, first.stdout + first.stderr).toBe(3);
    const packages = new Set(readFileSync(loaded, "utf8").split("\n").flatMap((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.slice(1, 2) ?? []));
    expect(packages.has("@langchain/langgraph")).toBe(true);
    for (const unused of ["@langchain/openai", "openai", "ws", "pg", "prom-client", "cron-parser", "luxon"]) expect(packages.has(unused), unused).toBe(false);
  });

  it("holds one PGlite: the pgvector extension is an optional peer, not installed with devmind", () => {
    expect(installedCopies(project, "@electric-sql/pglite")).toHaveLength(1);
    expect(installedCopies(project, "@electric-sql/pglite-pgvector")).toEqual([]);
  });

  it("a graph that resolves a second copy of LangGraph beside devmind's: one warning naming both copies and what to do", async () => {
    // a folder of the project with its own copy of @langchain/langgraph (the same files, another path)
    const sub = join(project, "second");
    mkdirSync(join(sub, "node_modules", "@langchain"), { recursive: true });
    cpSync(join(project, "node_modules", "@langchain", "langgraph"), join(sub, "node_modules", "@langchain", "langgraph"), { recursive: true });
    cpSync(join(project, "graph.ts"), join(sub, "graph.ts"));
    cpSync(join(project, "langgraph.json"), join(sub, "langgraph.json"));
    const version = (JSON.parse(readFileSync(join(project, "node_modules", "@langchain", "langgraph", "package.json"), "utf8")) as { version: string }).version;
    const listed = await run(devmind(), ["graphs"], sub, { DEVMIND_DATA_DIR: join(project, ".devmind") });
    const warnings = listed.stderr.split("\n").filter((line) => line.includes("second copy"));
    expect(warnings, listed.stderr).toHaveLength(1);
    expect(warnings[0]).toContain(`second copy of @langchain/langgraph (${version} in ${join(sub, "node_modules", "@langchain", "langgraph")}`);
    expect(warnings[0]).toContain(`beside devmind's (${version} in ${join(project, "node_modules", "@langchain", "langgraph")})`);
    expect(warnings[0]).toContain(`npm install --save-exact @langchain/langgraph@${version}`);
    // the project's own graphs, resolving devmind's copy: no warning
    const same = await run(devmind(), ["graphs"], project, { DEVMIND_DATA_DIR: join(project, ".devmind") });
    expect(same.stderr).not.toContain("second copy");
  });
});
