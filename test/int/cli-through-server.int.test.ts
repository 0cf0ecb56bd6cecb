/**
 * The CLI beside a running server on the embedded database (CONTRACT section 7): while `devmind
 * serve` holds the data directory, `runs`, `show`, `events`, `approve`, `reject`, `resume`,
 * `cancel` and `run --detach` go through its HTTP API (the lock file names its URL) with the exit
 * codes of the direct path, and the server's workers execute the runs. A server that is gone
 * (killed: a stale lock) leaves nothing behind: the next command takes the database over, says so,
 * and the runs are all there; a lock naming a server that does not answer is DATABASE_LOCKED
 * saying what to do.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { hostname, tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { ndjson } from "../helpers/cli-env.js";
import { seedDataDir } from "../helpers/pglite-template.js";
import { spawnServe, type ServeProcess } from "../helpers/server-process.js";
import { waitUntil } from "../helpers/waits.js";
import { REPO_ROOT } from "../setup/build-outputs.js";

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `devmind run --detach ARGS`: exit 0, the run id (its only stdout). */
async function detached(args: string[], env: Record<string, string>, cwd?: string): Promise<string> {
  const result = await runCli(["run", "--detach", ...args], env, cwd === undefined ? {} : { cwd });
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toMatch(/^[0-9a-f-]{36}\n$/);
  return result.stdout.trim();
}

function tempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function serve(env: Record<string, string>, args: string[] = [], cwd?: string): Promise<ServeProcess> {
  const server = await spawnServe(["--port", "0", "--workers", "2", ...args], env, 120_000, cwd === undefined ? {} : { cwd });
  cleanups.push(() => server.stop());
  return server;
}

interface RunJson {
  run_id: string;
  thread_id: string;
  status: string;
  stop_reason: string | null;
}

/** The key of the first test's server (and of its CLI commands, from the same environment). */
const KEY = "cli-through-server-key";

async function runOf(server: ServeProcess, runId: string): Promise<RunJson> {
  return (await (await fetch(`${server.url}/runs/${runId}`, { headers: { "x-api-key": KEY } })).json()) as RunJson;
}

/** The `approval.decided` events of run `runId`'s thread, as `devmind events --json` (through the server) prints them for the run that resumed it. */
async function decidedBy(env: Record<string, string>, runId: string, cwd?: string): Promise<Record<string, unknown>[]> {
  const runs = ndjson((await runCli(["runs", "--json"], env, cwd === undefined ? {} : { cwd })).stdout);
  const decided: Record<string, unknown>[] = [];
  for (const run of runs.filter((item) => item["resumes_run"] === runId || item["run_id"] === runId)) {
    const events = ndjson((await runCli(["events", String(run["run_id"]), "--json"], env, cwd === undefined ? {} : { cwd })).stdout);
    for (const event of events.filter((item) => item["type"] === "approval.decided")) decided.push({ tool_call_id: event["tool_call_id"], decision: event["decision"], by: event["by"], reason: event["reason"] });
  }
  return decided;
}

/** Waits until the run stopped (on the server's workers): finished, or its thread waits at an interrupt. */
function stopped(server: ServeProcess, runId: string): Promise<RunJson> {
  return waitUntil(`run ${runId} stopped`, async () => {
    const run = await runOf(server, runId);
    return run.status === "pending" || run.status === "running" ? undefined : run;
  }, 60_000);
}

describe("CLI commands beside a devmind serve holding the embedded database", () => {
  it("run --detach, runs, show, events, approve, reject and cancel go through the server, with the direct path's exit codes", async () => {
    const dir = tempDir("devmind-cli-server-");
    const workspace = join(dir, "ws");
    mkdirSync(workspace);
    const turns = join(dir, "turns.json");
    // one thread: an approval (approved), an approval (rejected), then a slow answer (cancelled)
    writeFileSync(
      turns,
      JSON.stringify([
        { tool_calls: [{ id: "c1", name: "write_file", args: { path: "a.txt", content: "yes" } }] },
        { content: "wrote a.txt" },
        { tool_calls: [{ id: "c2", name: "write_file", args: { path: "b.txt", content: "no" } }] },
        { content: "left b.txt alone" },
        { content: "too slow", delay_ms: 120_000 },
      ]),
    );
    seedDataDir(join(dir, "data"));
    // with API keys set, the CLI sends the first one of the same configuration
    const env = { DEVMIND_DATA_DIR: join(dir, "data"), DEVMIND_WORKSPACE: workspace, DEVMIND_MODEL: `scripted:${turns}`, DEVMIND_API_KEYS: `cli=${KEY}` };
    const server = await serve(env);
    const lockPath = join(dir, "data", "pgdata.lock");
    const lock = JSON.parse(readFileSync(lockPath, "utf8")) as { pid: number; url?: string; ownerKey?: string };
    expect(lock).toMatchObject({ pid: server.pid, url: server.url });
    // the local owner key: only this user reads it
    expect(lock.ownerKey).toMatch(/^[\w-]{43}$/);
    expect(statSync(lockPath).mode & 0o777).toBe(0o600);

    const queued = await runCli(["run", "--detach", "--max-tool-calls", "5", "write a.txt"], env);
    expect(queued.code, queued.stderr).toBe(0);
    const first = queued.stdout.trim();
    expect(queued.stderr).toContain(`Follow it: `);
    const waiting = await stopped(server, first);
    expect(waiting).toMatchObject({ status: "success", stop_reason: "interrupt" });
    // the run's own limits went with it
    expect(((await runOf(server, first)) as unknown as { limits: Record<string, unknown> }).limits).toMatchObject({ maxToolCalls: 5 });

    const runs = await runCli(["runs"], env);
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout).toMatch(new RegExp(`^${first}  success\\s+interrupt\\s+1r/0t\\s+\\S+  write a\\.txt$`, "m"));
    const listed = ndjson((await runCli(["runs", "--json", "--status", "success"], env)).stdout);
    expect(listed.map((run) => run["run_id"])).toEqual([first]);

    const show = await runCli(["show", first], env);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(`run ${first}: success (interrupt) · 1 model round · 0 tool calls`);
    expect(show.stdout).toContain('waiting: write_file(path="a.txt", content="yes")  [call c1]');

    const events = await runCli(["events", first, "--json"], env);
    expect(events.code, events.stderr).toBe(0);
    const types = ndjson(events.stdout).map((event) => event["type"]);
    expect(types[0]).toBe("run.created");
    expect(types).toContain("approval.requested");
    expect(ndjson(events.stdout).map((event) => event["seq"])).toEqual(types.map((_, index) => index + 1));

    const approved = await runCli(["approve", first, "--reason", "fine", "--by", "Zoë at the desk"], env);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain('approved write_file(path="a.txt", content="yes") by Zoë at the desk');
    // recorded as the decider, as on the direct path (not the name of the CLI's key)
    expect(await decidedBy(env, first)).toEqual([{ tool_call_id: "c1", decision: "approve", by: "Zoë at the desk", reason: "fine" }]);
    expect(approved.stdout).toMatch(new RegExp(`run \\S+ continues the thread of run ${first} on the devmind server at ${server.url.replace(/\./g, "\\.")}`));
    expect(approved.stdout).toMatch(/✓ write_file\(path="a\.txt", content="yes"\)/);
    expect(approved.stdout).toMatch(/run \S+: success \(completed\) · 2 model rounds · 1 tool call/);
    expect(readFileSync(join(workspace, "a.txt"), "utf8")).toBe("yes");

    const thread = waiting.thread_id;
    const second = await detached(["--thread", thread, "write b.txt"], env);
    expect(await stopped(server, second)).toMatchObject({ stop_reason: "interrupt" });
    const rejected = await runCli(["reject", second, "--reason", "not b", "--json"], env);
    expect(rejected.code, rejected.stderr).toBe(0);
    const result = ndjson(rejected.stdout).at(-1);
    expect(result).toMatchObject({ type: "result", status: "success", stop_reason: "completed", answer: "left b.txt alone", resumes_run: second });
    expect(existsSync(join(workspace, "b.txt"))).toBe(false);
    // without --by: the direct path's default, cli:<login>
    expect(await decidedBy(env, second)).toEqual([{ tool_call_id: "c2", decision: "reject", by: `cli:${userInfo().username}`, reason: "not b" }]);

    // a decision on a run no longer waiting: exit 2 as on the direct path, nothing changed
    const again = await runCli(["approve", second], env);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`run ${second} is not waiting for approval`);

    const third = await detached(["--thread", thread, "and now?"], env);
    await waitUntil("the slow run is running", async () => (await runOf(server, third)).status === "running", 60_000);
    const cancelled = await runCli(["cancel", third], env);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toBe(`run ${third} cancelled\n`);
    expect((await runOf(server, third)).status).toBe("interrupted");

    const unknown = await runCli(["show", "00000000-0000-4000-8000-000000000000"], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("[RUN_NOT_FOUND]");

    // the CLI is the local owner (it read the lock file): its key is not what lets it in
    const otherKey = await runCli(["runs"], { ...env, DEVMIND_API_KEYS: "cli=not-the-key" });
    expect(otherKey.code, otherKey.stderr).toBe(0);
    expect(otherKey.stdout).toContain(first);
    // an HTTP client with that key is refused; a wrong owner key changes nothing, and a name it claims is not read
    for (const headers of <Record<string, string>[]>[{ "x-api-key": "not-the-key" }, { "x-api-key": "not-the-key", "x-devmind-local-owner": "guess", "x-devmind-by": "root" }]) {
      const response = await fetch(`${server.url}/runs`, { headers });
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ error: "FORBIDDEN", message: "the API key is not valid" });
    }
    // a lock written by a server without an owner key (an older devmind): the CLI's key, refused when wrong, said, exit 2
    const { ownerKey: _ownerKey, ...withoutKey } = JSON.parse(readFileSync(lockPath, "utf8")) as Record<string, unknown>;
    writeFileSync(lockPath, JSON.stringify(withoutKey), { mode: 0o600 });
    const refused = await runCli(["runs"], { ...env, DEVMIND_API_KEYS: "cli=not-the-key" });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`the devmind server at ${server.url} refused the request (403: the API key is not valid)`);
  }, 400_000);

  it("resume --value through a server; show and events print what the direct path prints; after the server is killed (stale lock) the next command takes over and finds every run", async () => {
    const project = tempDir("devmind-cli-server-project-");
    writeFileSync(join(project, "package.json"), JSON.stringify({ type: "module" }));
    symlinkSync(join(REPO_ROOT, "node_modules"), join(project, "node_modules"), "dir");
    writeFileSync(join(project, "langgraph.json"), JSON.stringify({ graphs: { ask: "./ask.ts:graph" } }));
    writeFileSync(
      join(project, "ask.ts"),
      `import { Annotation, END, START, StateGraph, interrupt } from "@langchain/langgraph";
const State = Annotation.Root({ question: Annotation<string>, answer: Annotation<string> });
export const graph = new StateGraph(State)
  .addNode("ask", (state) => ({ answer: String(interrupt({ question: state.question })) }))
  .addEdge(START, "ask")
  .addEdge("ask", END)
  .compile();
`,
    );
    seedDataDir(join(project, ".devmind"));
    const env = { DEVMIND_WORKSPACE: join(project, "ws") };
    const server = await serve(env, [], project);
    const asked = await detached(["--graph", "ask", "--input", '{"question":"colour?"}'], env, project);
    expect(await stopped(server, asked)).toMatchObject({ stop_reason: "interrupt" });

    const resumed = await runCli(["resume", asked, "--value", '"blue"', "--by", "Ann", "--reason", "her pick"], env, { cwd: project });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('answer: "blue"');
    expect(resumed.stdout).toMatch(/run \S+: success \(completed\)/);
    // recorded as given, as on the direct path
    const given = ndjson((await runCli(["events", asked, "--json"], env, { cwd: project })).stdout).filter((event) => event["type"] === "resume.given");
    expect(given.map((event) => [event["by"], event["reason"]])).toEqual([["Ann", "her pick"]]);

    // another run waits at the interrupt when the server dies without a word (SIGKILL: the lock stays)
    const waiting = await detached(["--graph", "ask", "--input", '{"question":"size?"}'], env, project);
    expect(await stopped(server, waiting)).toMatchObject({ stop_reason: "interrupt" });
    // what the read commands print through the server, to compare with the direct path below
    const reads = [["show", asked], ["show", asked, "--json"], ["events", asked, "--json"], ["show", waiting], ["events", waiting]];
    const throughServer = [];
    for (const args of reads) throughServer.push(await runCli(args, env, { cwd: project }));
    expect(throughServer.map((result) => result.code)).toEqual(reads.map(() => 0));
    expect(throughServer[0]?.stdout).toContain('answer: "blue"');
    process.kill(server.pid, "SIGKILL");
    await server.stop();
    expect(existsSync(join(project, ".devmind", "pgdata.lock"))).toBe(true);

    const runs = await runCli(["runs"], env, { cwd: project });
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stderr).toContain(`devmind: process ${server.pid} (a devmind server at ${server.url}), which held .devmind, is gone; this command takes the embedded database over`);
    for (const id of [asked, waiting]) expect(runs.stdout).toContain(id);
    // the same output and exit codes as through the server, byte for byte
    for (const [index, args] of reads.entries()) {
      const direct = await runCli(args, env, { cwd: project });
      expect({ args, code: direct.code, stdout: direct.stdout }).toEqual({ args, code: throughServer[index]?.code, stdout: throughServer[index]?.stdout });
    }
    // nothing lost: the waiting run is answered directly now
    const answered = await runCli(["resume", waiting, "--value", '"large"'], env, { cwd: project });
    expect(answered.code, answered.stderr).toBe(0);
    expect(answered.stdout).toContain('answer: "large"');
  }, 400_000);

  it("a project with an auth handler: the CLI goes through as the local owner (runs, show, approve --by); a wrong or missing owner key still meets the handler; the key is in no log, event or output", async () => {
    const project = tempDir("devmind-cli-server-auth-");
    writeFileSync(join(project, "package.json"), JSON.stringify({ type: "module" }));
    symlinkSync(join(REPO_ROOT, "node_modules"), join(project, "node_modules"), "dir");
    writeFileSync(join(project, "langgraph.json"), JSON.stringify({ graphs: { publish: "./publish.ts:graph" }, auth: { path: "./auth.ts:auth" } }));
    // bearer tokens only; every thread belongs to its creator
    writeFileSync(
      join(project, "auth.ts"),
      `import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";
const USERS: Record<string, string> = { "tok-bob": "bob" };
export const auth = new Auth()
  .authenticate(async (request: Request) => {
    const user = USERS[(request.headers.get("authorization") ?? "").replace(/^Bearer /i, "")];
    if (user === undefined) throw new HTTPException(401, { message: "no such user here" });
    return { identity: user, permissions: ["me"] };
  })
  .on("threads", ({ action, value, user }) => {
    if (action === "create" || action === "create_run") {
      const withMetadata = value as { metadata?: Record<string, unknown> | null };
      withMetadata.metadata ??= {};
      withMetadata.metadata["owner"] = user.identity;
    }
    return { owner: user.identity };
  });
`,
    );
    // a graph that asks a human before it publishes (LangChain's HITL request shape)
    writeFileSync(
      join(project, "publish.ts"),
      `import { Annotation, END, START, StateGraph, interrupt } from "@langchain/langgraph";
const State = Annotation.Root({ note: Annotation<string>, outcome: Annotation<unknown> });
export const graph = new StateGraph(State)
  .addNode("gate", (state) => ({
    outcome: interrupt({
      actionRequests: [{ name: "publish", args: { note: state.note }, description: "publish the note" }],
      reviewConfigs: [{ actionName: "publish", allowedDecisions: ["approve", "reject"] }],
    }),
  }))
  .addEdge(START, "gate")
  .addEdge("gate", END)
  .compile();
`,
    );
    seedDataDir(join(project, ".devmind"));
    const env = { DEVMIND_WORKSPACE: join(project, "ws"), LOG_LEVEL: "debug" };
    const server = await serve(env, [], project);
    const ownerKey = (JSON.parse(readFileSync(join(project, ".devmind", "pgdata.lock"), "utf8")) as { ownerKey: string }).ownerKey;
    const asOwner = { "x-devmind-local-owner": ownerKey };
    const outputs: string[] = [];
    const cli = async (args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> => {
      const result = await runCli(args, env, { cwd: project });
      outputs.push(result.stdout, result.stderr);
      return result;
    };

    const queued = await cli(["run", "--detach", "--graph", "publish", "--input", '{"note":"hello"}']);
    expect(queued.code, queued.stderr).toBe(0);
    const runId = queued.stdout.trim();
    const waiting = await waitUntil("the run waits", async () => {
      const run = (await (await fetch(`${server.url}/runs/${runId}`, { headers: asOwner })).json()) as RunJson;
      return run.status === "pending" || run.status === "running" ? undefined : run;
    }, 60_000);
    expect(waiting).toMatchObject({ status: "success", stop_reason: "interrupt" });

    const runs = await cli(["runs"]);
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout).toContain(runId);
    const show = await cli(["show", runId]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(`run ${runId}: success (interrupt)`);
    expect(show.stdout).toContain('publish(note="hello")');

    // without the owner key, or with a wrong one: the handler answers (401), and a claimed name is never read
    for (const headers of <Record<string, string>[]>[{}, { "x-devmind-local-owner": "wrong" }, { "x-devmind-local-owner": `${ownerKey}x`, "x-devmind-by": "root" }]) {
      const response = await fetch(`${server.url}/runs/${runId}`, { headers });
      expect(response.status).toBe(401);
      expect(await response.text()).toContain("no such user here");
    }
    // a user the handler knows sees only its own threads: the owner's run is not bob's, owner key or not
    for (const headers of <Record<string, string>[]>[{ authorization: "Bearer tok-bob" }, { authorization: "Bearer tok-bob", "x-devmind-local-owner": "wrong", "x-devmind-by": "root" }]) {
      expect((await fetch(`${server.url}/runs/${runId}`, { headers })).status).toBe(404);
    }

    const approved = await cli(["approve", runId, "--by", "ops on call", "--reason", "looks right"]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain('approved publish(note="hello") by ops on call');
    expect(approved.stdout).toMatch(/run \S+: success \(completed\)/);
    expect(await decidedBy(env, runId, project)).toEqual([{ tool_call_id: expect.any(String), decision: "approve", by: "ops on call", reason: "looks right" }]);

    // bob's own waiting run, decided by bob's token with a claimed name: recorded as bob, the name ignored
    const thread = (await (await fetch(`${server.url}/threads`, { method: "POST", headers: { authorization: "Bearer tok-bob", "content-type": "application/json" }, body: "{}" })).json()) as { thread_id: string };
    const created = await fetch(`${server.url}/threads/${thread.thread_id}/runs/wait`, { method: "POST", headers: { authorization: "Bearer tok-bob", "content-type": "application/json" }, body: JSON.stringify({ assistant_id: "publish", input: { note: "bob's" } }) });
    expect(created.status).toBe(200);
    const bobsRun = (await (await fetch(`${server.url}/threads/${thread.thread_id}/runs`, { headers: { authorization: "Bearer tok-bob" } })).json()) as { run_id: string }[];
    const bobsWaiting = bobsRun[0]?.run_id as string;
    const decided = await fetch(`${server.url}/runs/${bobsWaiting}/decisions`, {
      method: "POST",
      headers: { authorization: "Bearer tok-bob", "x-devmind-local-owner": "wrong", "x-devmind-by": "someone-else", "content-type": "application/json" },
      body: JSON.stringify({ decisions: [{ type: "approve" }] }),
    });
    expect(decided.status, await decided.clone().text()).toBe(200);
    expect((await decidedBy(env, bobsWaiting, project)).map((item) => item["by"])).toEqual(["bob"]);

    // the key: in no event, no output of the CLI, no log line of the server (LOG_LEVEL=debug)
    const events = await cli(["events", runId, "--json"]);
    expect(events.code, events.stderr).toBe(0);
    await server.stop();
    for (const text of [...outputs, server.stdout(), server.stderr()]) expect(text).not.toContain(ownerKey);
  }, 400_000);

  it("a lock naming a server that does not answer: DATABASE_LOCKED saying what to do, exit 2", async () => {
    const dir = tempDir("devmind-cli-dead-server-");
    mkdirSync(join(dir, "data"));
    // a live process (this test's) recorded as a server on a port nobody listens on (one just freed)
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const url = `http://127.0.0.1:${port}`;
    const lock = join(dir, "data", "pgdata.lock");
    writeFileSync(lock, JSON.stringify({ pid: process.pid, host: hostname(), token: "t", startedAt: new Date().toISOString(), url }));
    const result = await runCli(["runs"], { DEVMIND_DATA_DIR: join(dir, "data") });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`the embedded database is held by process ${process.pid}, recorded as a devmind server at ${url}, which does not answer (ECONNREFUSED)`);
    expect(result.stderr).toContain(`delete ${lock} once no devmind process uses the data directory`);
    expect(result.stderr).toContain("[DATABASE_LOCKED]");
  }, 60_000);
});
