/**
 * `devmind dockerfile` / `devmind build` on a real LangGraph project. Docker does not run where
 * the tests run, so the generated Dockerfile's build stage is executed step by step on this
 * machine (WORKDIR, COPY honouring the generated .dockerignore, each RUN in a shell, the image's
 * paths mapped into a temp folder): the project is installed with devmind from its `npm pack`
 * tarball, `dockerfile_lines` run, dev dependencies are pruned, every graph loads; then the
 * runtime stage's ENTRYPOINT runs a graph with the stage's ENV. SLOW: one `npm install`.
 */
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { ndjson } from "../helpers/cli-env.js";
import { REPO_ROOT } from "../setup/build-outputs.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function tempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  dirs.push(dir);
  return dir;
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program with exactly `env`, bounded by `timeoutMs` (its process group killed then). */
function run(file: string, args: string[], cwd: string, env: Record<string, string>, timeoutMs = 300_000): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.pid !== undefined && process.kill(-child.pid, "SIGKILL"), timeoutMs);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const BASE_ENV = { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? tmpdir() };

const GRAPH = `import { Annotation, END, START, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({ text: Annotation<string>(), greeting: Annotation<string>() });

export const graph = new StateGraph(State)
  .addNode("greet", (state: typeof State.State) => ({ greeting: \`hello \${state.text} from \${process.env.GREETER ?? "nobody"}\` }))
  .addEdge(START, "greet")
  .addEdge("greet", END)
  .compile();
`;

/** A LangGraph project as a user has it: package.json with devmind from a tarball in vendor/, langgraph.json, a graph, a .env. */
function project(dir: string, tarball: string | null, pkg: Record<string, unknown> = {}): void {
  mkdirSync(join(dir, "vendor"), { recursive: true });
  if (tarball !== null) cpSync(tarball, join(dir, "vendor", "devmind.tgz"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "my-graphs", private: true, type: "module", dependencies: { devmind: "file:vendor/devmind.tgz" }, ...pkg }, null, 2));
  writeFileSync(
    join(dir, "langgraph.json"),
    JSON.stringify({ node_version: "20", dependencies: ["."], graphs: { greeter: "./graph.ts:graph" }, env: ".env", dockerfile_lines: ["RUN echo yes > from-dockerfile-lines.txt"] }, null, 2),
  );
  writeFileSync(join(dir, "graph.ts"), GRAPH);
  writeFileSync(join(dir, ".env"), "GREETER=the-dotenv-file\n");
}

/** The instructions of each stage (continuations joined, comments dropped). */
function stages(dockerfile: string): { name: string; lines: string[] }[] {
  const logical = dockerfile.replace(/\\\n/g, " ").split("\n").map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#"));
  const result: { name: string; lines: string[] }[] = [];
  for (const line of logical) {
    const from = /^FROM\s+\S+\s+AS\s+(\S+)$/i.exec(line);
    if (from !== null) result.push({ name: from[1] as string, lines: [] });
    else if (result.length > 0) result.at(-1)?.lines.push(line);
  }
  return result;
}

/** Whether `.dockerignore` keeps `name` (a top-level entry) out of the context: exact names and `prefix*` patterns. */
function ignoredBy(patterns: string[], name: string): boolean {
  return patterns.some((pattern) => (pattern.endsWith("*") ? name.startsWith(pattern.slice(0, -1)) : pattern === name));
}

describe("devmind dockerfile on a LangGraph project [slow]", () => {
  it("its build stage, executed step by step, installs the project with devmind from its tarball and loads every graph; the runtime stage's entrypoint runs a graph", async () => {
    const scratch = tempDir("devmind-dockerfile-");
    const packed = await run("npm", ["pack", "--ignore-scripts", "--pack-destination", scratch], REPO_ROOT, BASE_ENV, 120_000);
    expect(packed.code, packed.stderr).toBe(0);
    const tarball = join(scratch, packed.stdout.trim().split("\n").at(-1) as string);
    const dir = join(scratch, "my-graphs");
    mkdirSync(dir);
    project(dir, tarball);

    const made = await runCli(["dockerfile", "--add-docker-compose"], {}, { cwd: dir });
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toBe([join(dir, "Dockerfile"), join(dir, "docker-compose.yml"), join(dir, ".dockerignore")].map((path) => `wrote ${path}\n`).join(""));
    expect(made.stderr).toBe("");
    const dockerfile = readFileSync(join(dir, "Dockerfile"), "utf8");
    const [build, runtime] = stages(dockerfile);
    expect([build?.name, runtime?.name]).toEqual(["build", "runtime"]);

    // the image's file system, mapped into a folder here
    const image = join(scratch, "image");
    const mapped = (text: string): string => text.replace(/(^|[\s"[=])\/(deps|data|workspace)\b/g, `$1${image}/$2`);
    const ignore = readFileSync(join(dir, ".dockerignore"), "utf8").split("\n").map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#"));
    let cwd = "";
    const steps: string[] = [];
    for (const line of build?.lines ?? []) {
      const [instruction, ...rest] = line.split(" ");
      const argument = rest.join(" ");
      if (instruction === "WORKDIR") {
        cwd = mapped(argument);
        mkdirSync(cwd, { recursive: true });
      } else if (instruction === "COPY") {
        expect(argument).toBe(". .");
        for (const name of readdirSync(dir)) if (!ignoredBy(ignore, name)) cpSync(join(dir, name), join(cwd, name), { recursive: true });
      } else if (instruction === "RUN") {
        // npm's cache on this machine stands in for the registry where it can
        const ran = await run("bash", ["-c", mapped(argument)], cwd, { ...BASE_ENV, npm_config_prefer_offline: "true" });
        expect(ran.code, `${line}\n${ran.stdout}\n${ran.stderr}`).toBe(0);
        steps.push(line);
        if (/devmind graphs/.test(line)) expect(ran.stdout).toMatch(/greeter\s+\.\/graph\.ts:graph\s+loaded \(compiled\)/);
      } else {
        throw new Error(`unexpected instruction in the build stage: ${line}`);
      }
    }
    expect(steps.map((line) => line.split(" ")[1])).toEqual(["npm", "echo", "npm", "test", `${"/deps/my-graphs/node_modules/.bin/devmind"}`]);
    // what the build made: devmind installed from the tarball, dockerfile_lines ran, the .env left out (an empty one stands in)
    expect(JSON.parse(readFileSync(join(cwd, "node_modules", "devmind", "package.json"), "utf8"))).toMatchObject({ name: "devmind" });
    expect(readFileSync(join(cwd, "from-dockerfile-lines.txt"), "utf8")).toBe("yes\n");
    expect(readFileSync(join(cwd, ".env"), "utf8")).toBe("");
    expect(existsSync(join(cwd, "Dockerfile"))).toBe(false);

    // the runtime stage: its ENV (paths mapped), its ENTRYPOINT, a graph run on the embedded database; variables come from the container
    const envLine = (runtime?.lines ?? []).find((line) => line.startsWith("ENV ")) as string;
    const imageEnv = Object.fromEntries(envLine.slice(4).split(/\s+/).map((pair) => pair.split("=") as [string, string]));
    for (const key of ["DEVMIND_DATA_DIR", "DEVMIND_WORKSPACE"]) imageEnv[key] = mapped(` ${imageEnv[key] as string}`).trim();
    mkdirSync(imageEnv["DEVMIND_WORKSPACE"] as string, { recursive: true });
    const entrypoint = JSON.parse((runtime?.lines ?? []).find((line) => line.startsWith("ENTRYPOINT "))?.slice("ENTRYPOINT ".length) as string) as string[];
    expect(JSON.parse((runtime?.lines ?? []).at(-1)?.slice("CMD ".length) as string)).toEqual(["serve", "--config", "langgraph.json"]);
    const containerEnv = { ...BASE_ENV, ...imageEnv, DEVMIND_API_KEYS: "ops=a-long-test-key-1234", GREETER: "the-container" };
    const greeted = await run(mapped(` ${entrypoint[0] as string}`).trim(), ["run", "--config", "langgraph.json", "--graph", "greeter", "--input", '{"text":"image"}', "--json"], cwd, containerEnv, 180_000);
    expect(greeted.code, greeted.stderr).toBe(0);
    expect(ndjson(greeted.stdout).at(-1)).toMatchObject({ type: "result", status: "success", values: { text: "image", greeting: "hello image from the-container" } });

    // a graph whose imports are not in the image: the build's graphs step fails, naming the graph and the package
    writeFileSync(join(cwd, "broken.ts"), 'import { left } from "left-out-package";\nexport const graph = left;\n');
    writeFileSync(join(cwd, "langgraph.broken.json"), JSON.stringify({ graphs: { broken: "./broken.ts:graph" } }));
    const broken = await run(mapped(` ${entrypoint[0] as string}`).trim(), ["graphs", "--config", "langgraph.broken.json"], cwd, BASE_ENV, 120_000);
    expect(broken.code).toBe(2);
    expect(broken.stdout + broken.stderr).toMatch(/broken/);
    expect(broken.stdout + broken.stderr).toContain("left-out-package");
  }, 600_000);

  it("refuses, naming what to do, a project it cannot put in an image; never overwrites a Dockerfile it did not write; build needs docker", async () => {
    const scratch = tempDir("devmind-dockerfile-bad-");
    const refusal = async (setup: (dir: string) => void, args: string[] = ["dockerfile", "-"]): Promise<Ran> => {
      const dir = join(scratch, `p${dirs.length}-${Math.random().toString(36).slice(2, 8)}`);
      mkdirSync(dir);
      setup(dir);
      return runCli(args, {}, { cwd: dir });
    };
    const noPackage = await refusal((dir) => {
      project(dir, null);
      rmSync(join(dir, "package.json"));
    });
    expect(noPackage.code).toBe(2);
    expect(noPackage.stderr).toMatch(/no package\.json next to .*langgraph\.json/);
    const noDevmind = await refusal((dir) => project(dir, null, { dependencies: { "@langchain/langgraph": "1.7.3" } }));
    expect(noDevmind.code).toBe(2);
    expect(noDevmind.stderr).toMatch(/devmind is not among "dependencies".*npm install \/path\/to\/devmind-VERSION\.tgz/);
    const devOnly = await refusal((dir) => project(dir, null, { dependencies: {}, devDependencies: { devmind: "file:vendor/devmind.tgz" } }));
    expect(devOnly.code).toBe(2);
    expect(devOnly.stderr).toContain("move it to dependencies");
    const outside = await refusal((dir) => project(dir, null, { dependencies: { devmind: "file:../devmind-0.1.0.tgz" } }));
    expect(outside.code).toBe(2);
    expect(outside.stderr).toMatch(/dependency devmind \("file:\.\.\/devmind-0\.1\.0\.tgz"\) lies outside the project directory .*copy it into the project \(e\.g\. vendor\/devmind-0\.1\.0\.tgz\)/);
    const noConfig = await refusal(() => undefined);
    expect(noConfig.code).toBe(2);
    expect(noConfig.stderr).toMatch(/no langgraph\.json here/);

    // a Dockerfile of the user's own is left as it is; --force replaces it; one devmind wrote is replaced quietly
    const own = join(scratch, "own");
    mkdirSync(own);
    project(own, null);
    writeFileSync(join(own, "Dockerfile"), "FROM scratch\n");
    const kept = await runCli(["dockerfile"], {}, { cwd: own });
    expect(kept.code).toBe(2);
    expect(kept.stderr).toContain("was not made by devmind dockerfile; it is left as it is");
    expect(readFileSync(join(own, "Dockerfile"), "utf8")).toBe("FROM scratch\n");
    expect((await runCli(["dockerfile", "--force"], {}, { cwd: own })).code).toBe(0);
    expect((await runCli(["dockerfile"], {}, { cwd: own })).code).toBe(0);
    const printed = await runCli(["dockerfile", "-"], {}, { cwd: own });
    expect(readFileSync(join(own, "Dockerfile"), "utf8")).toBe(printed.stdout);

    // build: without docker on PATH, exit 2 saying so; with one, `docker build -f <generated> -t TAG <project>`
    const noDocker = await runCli(["build", "-t", "my-graphs:test"], { PATH: join(scratch, "no-such-bin") }, { cwd: own });
    expect(noDocker.code).toBe(2);
    expect(noDocker.stderr).toContain("docker is not on PATH");
    const bin = join(scratch, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "docker"), `#!/bin/sh\nprintf '%s\\n' "$@" > "${scratch}/docker-args.txt"\n/bin/cat "$3" > "${scratch}/docker-Dockerfile"\n`, { mode: 0o755 });
    const built = await runCli(["build", "-t", "my-graphs:test", "--pull"], { PATH: bin }, { cwd: own });
    expect(built.code, built.stderr).toBe(0);
    const args = readFileSync(join(scratch, "docker-args.txt"), "utf8").trim().split("\n");
    expect(args[0]).toBe("build");
    expect(args.slice(3)).toEqual(["-t", "my-graphs:test", "--pull", own]);
    expect(readFileSync(join(scratch, "docker-Dockerfile"), "utf8")).toBe(printed.stdout);
    // the generated file was kept out of the project and removed
    expect(existsSync(args[2] as string)).toBe(false);
  }, 300_000);
});
