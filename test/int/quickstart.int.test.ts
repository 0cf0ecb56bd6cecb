/**
 * SLOW (a minute; it runs in CI all the same): README's quick start, verbatim, on a fresh
 * clone of the committed HEAD — `npm install` (which builds through `prepare`; the packages are
 * linked from this checkout, see below), `npm run demo`
 * (the BUILT CLI, embedded PGlite, scripted model, no key, no database server, an environment
 * holding nothing but PATH and HOME), then `npm test`.
 *
 * `npm test` is run on one unit file: the whole suite inside the whole suite would recurse into
 * this very test and double CI's time, and every other file already runs in the outer `npm test`.
 * What this test adds is that a fresh clone installs, builds and runs its tests.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

interface Ran {
  code: number | null;
  output: string;
}

/** Runs a command with only PATH and HOME (npm's cache) in its environment, bounded by `timeoutMs`. */
function sh(command: string, args: string[], cwd: string, timeoutMs: number): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const env = { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? tmpdir() };
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    // the whole process group: npm's children (node, tsc, vitest) go too
    const timer = setTimeout(() => child.pid !== undefined && process.kill(-child.pid, "SIGKILL"), timeoutMs);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Mirrors `from` into `to` as hard links (one file system), without npm's and the tools' state files. */
function linkPackages(from: string, to: string): void {
  execFileSync("cp", ["-al", from, to], { stdio: "ignore", timeout: 60_000 });
  for (const state of [".package-lock.json", ".cache", ".vite", ".vite-temp"]) rmSync(join(to, state), { recursive: true, force: true });
}

describe("README quick start on a fresh clone [slow]", () => {
  it("npm install, npm run demo, npm test work offline with no database server and no model key", async () => {
    const root = (await sh("git", ["-C", HERE, "rev-parse", "--show-toplevel"], HERE, 10_000)).output.trim();
    const dir = mkdtempSync(join(tmpdir(), "devmind-quickstart-"));
    dirs.push(dir);
    const clone = join(dir, "devmind");
    const cloned = await sh("git", ["clone", "--quiet", "--no-hardlinks", root, clone], dir, 60_000);
    expect(cloned.code, cloned.output).toBe(0);

    // The packages themselves: hard links to this checkout's node_modules (installed by `npm ci` from
    // the same package-lock.json, so the very tree a fresh install makes; CI's own `npm ci` on a clean
    // clone is the from-scratch install). Extracting 13,000 files again cost about 40 s of CPU; what
    // this test adds is the rest: `npm install` finds the tree complete and runs `prepare` (tsc, the
    // CLI bundle, the PGlite template) in the clone. npm's and vitest's own state files are left out,
    // so nothing the clone writes reaches this checkout through a shared inode.
    linkPackages(join(root, "node_modules"), join(clone, "node_modules"));
    const install = await sh("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], clone, 300_000);
    expect(install.code, install.output).toBe(0);

    const demo = await sh("npm", ["run", "demo"], clone, 120_000);
    expect(demo.code, demo.output).toBe(0);
    const out = demo.output;
    expect(out).toContain("node dist/src/cli/main.js demo");
    expect(out).toContain("scripted model — no API key used");
    expect(out).toMatch(/data: .*\/\.devmind\/demo  \(embedded PGlite database in pgdata\/, shared by every demo; this demo's workspace in \d{8}-\d{6}\/workspace\/\)/);
    // the first demo makes the database from the template `npm install` built, and says so
    expect(out).toMatch(/creating the embedded database in .*\/\.devmind\/demo\/pgdata \(a copy of the migrated template built with devmind\)…\ncreated the embedded database in \d+\.\d s/);
    expect(out).toMatch(/✓ read_demo_text\(\)  \d+ ms/);
    expect(out).toMatch(/✓ add\(a=1, b=2\)  \d+ ms/);
    expect(out).toContain('⏸ write_file(path="summary.md"');
    const first = /2\. process (\d+) exited with code 3: the run waits for approval of write_file/.exec(out);
    const second = /process (\d+) \(another process\) · continuing run/.exec(out);
    expect(first).not.toBeNull();
    expect(second).not.toBeNull();
    expect(first?.[1]).not.toBe(second?.[1]);
    expect(out).toContain("↻ resumed (approval)");
    expect(out).toMatch(/✓ write_file\(path="summary.md".*\)  \d+ ms/);
    expect(out).toContain("Done. The demo text has 3 paragraphs");
    expect(out).toMatch(/run [0-9a-f-]{36}: success \(completed\) · 4 model rounds · 4 tool calls/);
    expect(out).toContain("- Every step of an agent run is checkpointed");
    expect(out).toContain("what to try next:");
    expect(out).toContain("your own graph:     next to its langgraph.json: npx devmind graphs");
    expect(out).toContain("OPENAI_API_KEY=");
    expect(out).toContain("DATABASE_URL=postgres://");

    // README "Bring your graph": its commands, as written there, in the clone's example (npx devmind
    // is the package's own bin here: the built CLI)
    const readme = readFileSync(join(clone, "README.md"), "utf8");
    const start = readme.indexOf("## Bring your graph");
    const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
    // the section's example block (the install block comes first)
    const block = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] as string).find((text) => text.includes("cd examples/")) ?? "";
    const commands = block.split("\n").filter((line) => line.startsWith("npx devmind ")).map((line) => line.replace(/\s+#.*$/, ""));
    expect(block).toContain("cd examples/approval-graph");
    expect(commands.map((line) => line.split(" ")[2])).toEqual(["graphs", "run", "resume", "serve"]);
    const example = join(clone, "examples", "approval-graph");
    const data = join(dir, "graph-data");
    const devmind = async (line: string, runId = ""): Promise<Ran> => {
      // the shell parses the README's quoting; npx devmind -> the clone's built CLI
      const command = line.replace(/^npx devmind /, `DEVMIND_DATA_DIR='${data}' node '${join(clone, "dist", "src", "cli", "main.js")}' `).replace("RUN_ID", runId);
      return sh("sh", ["-c", command], example, 120_000);
    };
    const graphs = await devmind(commands[0] as string);
    expect(graphs.code, graphs.output).toBe(0);
    expect(graphs.output).toMatch(/review\s+\.\/graph\.ts:graph\s+loaded/);
    const started = await devmind(commands[1] as string);
    expect(started.code, started.output).toBe(3);
    const runId = /run ([0-9a-f-]{36}) is waiting for a value/.exec(started.output)?.[1];
    expect(runId, started.output).toBeDefined();
    const resumed = await devmind(commands[2] as string, runId);
    expect(resumed.code, resumed.output).toBe(0);
    expect(resumed.output).toContain("✓ succeeded");

    const test = await sh("npm", ["test", "--", "test/unit/config.test.ts"], clone, 180_000);
    expect(test.code, test.output).toBe(0);
    // vitest colours its summary even through a pipe: read it without the escape sequences
    const plain = test.output.replace(/\u001b\[[0-9;]*m/g, "");
    expect(plain).toMatch(/Test Files\s+1 passed \(1\)/);
    expect(plain).toMatch(/Tests\s+\d+ passed/);
  }, 600_000);
});
