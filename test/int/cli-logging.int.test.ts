import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, spawnCli } from "../helpers/cli.js";
import { cliContexts } from "../helpers/cli-env.js";
import { itWithPostgres } from "../helpers/databases.js";
import { errorReply, OpenAiTestServer } from "../helpers/openai-server.js";

const context = cliContexts();
const model = new OpenAiTestServer();
beforeAll(async () => void (await model.start()));
afterAll(async () => await model.close());

// secrets no pattern recognises: only their configured values can hide them
const MODEL_KEY = "mysecretkey42";
const API_KEY = "anothersecret77";

/** The log lines of a process's stderr (it also prints a human line when a stop signal arrives). */
function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("logs and secrets of devmind serve / worker", () => {
  it("serve logs JSON lines on stderr and never a configured key, nor stores it in events or the run, when the model server echoes it", async () => {
    // a new data directory (a copy of the built template) and a schema of its own: its migrations
    // are applied by this serve, and logged
    const ctx = context("pglite", { seeded: false });
    model.reset();
    model.enqueue(errorReply(401, `Incorrect API key provided: ${MODEL_KEY}. You can find your API key at https://platform.openai.com/account/api-keys.`));
    const env = {
      ...ctx.env,
      DEVMIND_DB_SCHEMA: "app",
      OPENAI_API_KEY: MODEL_KEY,
      OPENAI_BASE_URL: model.baseUrl,
      DEVMIND_MODEL_MAX_RETRIES: "0",
      DEVMIND_API_KEYS: `ops=${API_KEY}`,
      LOG_LEVEL: "debug",
    };
    const serve = spawnCli(["serve", "--port", "0", "--workers", "1"], env, { cwd: ctx.dir });
    await serve.waitFor((out) => out.includes("listening on "));
    const url = /listening on (http:\/\/\S+)/.exec(serve.stdout())?.[1] as string;
    const headers = { "content-type": "application/json", "x-api-key": API_KEY };
    const created = await fetch(`${url}/runs`, { method: "POST", headers, body: JSON.stringify({ assistant_id: "agent", input: { messages: [{ role: "user", content: "hello" }] } }) });
    expect(created.status).toBe(200);
    const runId = ((await created.json()) as { run_id: string }).run_id;
    const run = await until("the run to fail", async () => {
      const record = (await (await fetch(`${url}/runs/${runId}`, { headers })).json()) as { status: string; error: { message: string } | null };
      return record.status === "error" ? record : undefined;
    });
    expect(run.error?.message).toContain("Incorrect API key provided: [REDACTED]");
    const events = await (await fetch(`${url}/runs/${runId}/events`, { headers })).text();
    expect(events).toContain("model.failed");
    expect(events).not.toContain(MODEL_KEY);
    expect(JSON.stringify(run)).not.toContain(MODEL_KEY);
    // a request with a wrong key, and one with the right key in the query string: 4xx, never logged with the key
    expect([401, 403]).toContain((await fetch(`${url}/runs?api_key=${API_KEY}`, { headers: { "x-api-key": `${API_KEY}x` } })).status);
    await until("the run's executed log line", async () => (serve.stderr().includes('"event":"run.executed"') ? true : undefined));

    serve.kill("SIGTERM");
    const ended = await serve.exited;
    expect(ended.code).toBe(0);
    const lines = jsonLines(ended.stderr);
    for (const line of lines) expect(line).toMatchObject({ level: expect.any(String), time: expect.any(String), pid: serve.pid });
    expect(lines.map((line) => line["event"])).toEqual(expect.arrayContaining(["migration.applied", "run.claimed", "run.executed"]));
    const executed = lines.find((line) => line["event"] === "run.executed");
    expect(executed).toMatchObject({ level: "info", run_id: runId, status: "error", error: { message: expect.stringContaining("[REDACTED]") } });
    expect(ended.stderr).not.toContain(MODEL_KEY);
    expect(ended.stderr).not.toContain(API_KEY);
    expect(ended.stdout).not.toContain(MODEL_KEY);
    expect(ended.stdout).not.toContain(API_KEY);
  }, 300_000);

  itWithPostgres("`devmind run` never prints a configured key the model server echoes: live timeline, --json events, error lines", async () => {
    const ctx = context();
    model.reset();
    const echo = errorReply(401, `Incorrect API key provided: ${MODEL_KEY}. You can find your API key at https://platform.openai.com/account/api-keys.`);
    model.enqueue(echo, echo);
    const env = { ...ctx.env, OPENAI_API_KEY: MODEL_KEY, OPENAI_BASE_URL: model.baseUrl, DEVMIND_MODEL_MAX_RETRIES: "0", LOG_LEVEL: "debug" };
    for (const args of [["run", "hello"], ["run", "hello", "--json"]]) {
      const result = await runCli(args, env, { cwd: ctx.dir });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stdout).toContain("Incorrect API key provided: [REDACTED]");
      expect(result.stdout + result.stderr).not.toContain(MODEL_KEY);
    }
  }, 300_000);

  itWithPostgres("LOG_LEVEL=warn keeps a worker's info lines off stderr; at info they are there; stdout stays the human lines", async () => {
    const ctx = context();
    const script = ctx.script("hi.json", [{ content: "hi" }, { content: "hi again" }]);
    for (const [level, expectInfo] of [["warn", false], ["info", true]] as const) {
      const queued = await runCli(["run", `say hi at ${level}`, "--detach"], { ...ctx.env, ...script }, { cwd: ctx.dir });
      expect(queued.code, queued.stderr).toBe(0);
      const runId = queued.stdout.trim();
      const worker = spawnCli(["worker", "--concurrency", "1"], { ...ctx.env, ...script, LOG_LEVEL: level }, { cwd: ctx.dir });
      await worker.waitFor((out) => out.includes(`worker: run ${runId} success\n`));
      worker.kill("SIGTERM");
      const ended = await worker.exited;
      expect(ended.code).toBe(0);
      const lines = jsonLines(ended.stderr);
      expect(lines.some((line) => line["level"] === "info"), ended.stderr).toBe(expectInfo);
      if (expectInfo) expect(lines.find((line) => line["event"] === "run.claimed")).toMatchObject({ run_id: runId, component: "worker" });
      expect(ended.stdout).not.toContain('"level"');
    }
  }, 300_000);
});
