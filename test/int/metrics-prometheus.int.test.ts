import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, describe, expect, it } from "vitest";
import { killCliChildren, runCli, spawnCli, type CliChild } from "../helpers/cli.js";
import { TEST_DATABASE_URL, describeWithPostgres, dropSchema, freshSchemaName, openBackend } from "../helpers/databases.js";
import { spawnServe, type ServeProcess } from "../helpers/server-process.js";
import { HAS_PROMETHEUS, startPrometheus, type PrometheusProcess } from "../helpers/prometheus.js";
import { waitUntil } from "../helpers/waits.js";

const API_KEY = "ops-api-key-1";
const SCRAPE_KEY = "ops-scrape-key-1";
/** Each run: a tool call (add) and an answer; 10 + 20 tokens in, 5 + 2 out. */
const SCRIPT = [
  { tool_calls: [{ name: "add", args: { a: 1, b: 2 } }], usage: { input_tokens: 10, output_tokens: 5 } },
  { content: "3", usage: { input_tokens: 20, output_tokens: 2 } },
];
const RUNS = 6;

const describeScrape = HAS_PROMETHEUS ? describeWithPostgres : describe.skip;

describeScrape("Prometheus scrapes devmind serve and devmind worker (PostgreSQL)", () => {
  const schema = freshSchemaName("metrics");
  const dir = mkdtempSync(join(tmpdir(), "devmind-metrics-"));
  const script = join(dir, "script.json");
  writeFileSync(script, JSON.stringify(SCRIPT));
  const env: Record<string, string> = {
    DATABASE_URL: TEST_DATABASE_URL as string,
    DEVMIND_DB_SCHEMA: schema,
    DEVMIND_WORKSPACE: join(dir, "ws"),
    DEVMIND_MODEL: `scripted:${script}`,
    DEVMIND_API_KEYS: `ops=${API_KEY}`,
    DEVMIND_METRICS_KEY: SCRAPE_KEY,
    LOG_LEVEL: "warn",
  };
  let serve: ServeProcess | undefined;
  let worker: CliChild | undefined;
  let prometheus: PrometheusProcess | undefined;

  afterAll(async () => {
    await prometheus?.stop();
    await serve?.stop();
    worker?.kill("SIGTERM");
    await Promise.race([worker?.exited, new Promise((resolve) => setTimeout(resolve, 20_000).unref())]);
    await killCliChildren();
    const owner = await openBackend("postgres");
    await dropSchema(owner, schema);
    await owner.close();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it("its query API returns the counts a batch of runs made, summed over both processes", async () => {
    serve = await spawnServe(["--port", "0", "--workers", "1"], env);
    worker = spawnCli(["worker", "--concurrency", "2", "--metrics-port", "0"], env);
    await worker.waitFor((out) => /metrics at http:\/\/\S+\/metrics/.test(out), 60_000);
    const workerMetrics = /metrics at (http:\/\/\S+\/metrics)/.exec(worker.stdout())?.[1] as string;

    // the scrape key rule: none 401, a wrong one 403, the metrics key or an API key 200
    expect((await fetch(`${serve.url}/metrics`)).status).toBe(401);
    expect((await fetch(workerMetrics)).status).toBe(401);
    expect((await fetch(`${serve.url}/metrics`, { headers: { authorization: "Bearer wrong" } })).status).toBe(403);
    expect((await fetch(`${serve.url}/metrics`, { headers: { "x-api-key": API_KEY } })).status).toBe(200);
    // the scrape key opens /metrics only, not the API
    expect((await fetch(`${serve.url}/threads/search`, { method: "POST", headers: { "x-api-key": SCRAPE_KEY, "content-type": "application/json" }, body: "{}" })).status).toBe(403);

    prometheus = await startPrometheus(
      [
        { job: "serve", target: new URL(serve.url).host },
        { job: "worker", target: new URL(workerMetrics).host },
      ],
      SCRAPE_KEY,
    );
    const prom = prometheus;
    await waitUntil("both targets up", async () => {
      const up = await prom.query("up");
      return up.length === 2 && up.every((series) => series.value === 1);
    }, 60_000);

    const client = new Client({ apiUrl: serve.url, apiKey: API_KEY });
    await Promise.all(
      Array.from({ length: RUNS }, async () => {
        const thread = await client.threads.create();
        await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "1 + 2?" }] } });
      }),
    );

    const sum = async (expr: string): Promise<number> => (await prom.query(`sum(${expr})`))[0]?.value ?? 0;
    await waitUntil(`${RUNS} runs ended in Prometheus`, async () => (await sum('devmind_runs_ended_total{status="success",stop_reason="completed"}')) === RUNS, 60_000);
    expect(await sum("devmind_runs_started_total")).toBe(RUNS);
    expect(await sum('devmind_tool_calls_total{tool="add",outcome="success"}')).toBe(RUNS);
    expect(await sum('devmind_model_tokens_total{direction="input"}')).toBe(30 * RUNS);
    expect(await sum('devmind_model_tokens_total{direction="output"}')).toBe(7 * RUNS);
    expect(await sum("devmind_model_call_duration_seconds_count")).toBe(2 * RUNS);
    expect(await sum('devmind_node_duration_seconds_count{node="tools"}')).toBe(RUNS);
    expect(await sum("devmind_run_duration_seconds_count")).toBe(RUNS);
    // which process executed which run is the queue's business; both were scraped
    const byJob = await prom.query("sum by (job) (devmind_runs_ended_total)");
    expect(byJob.map((series) => series.metric["job"]).sort()).toEqual(expect.arrayContaining(byJob.length === 2 ? ["serve", "worker"] : [byJob[0]?.metric["job"] as string]));
    // the queue, read from the database at each scrape: both processes see it, empty once a scrape follows the batch
    const pending = await waitUntil("an empty queue scraped", async () => {
      const series = await prom.query('devmind_queue_pending_runs{graph="agent"} + devmind_runs_running{graph="agent"}');
      return series.length === 2 && series.every((one) => one.value === 0) ? series : undefined;
    }, 30_000);
    expect(pending.map((series) => series.metric["job"]).sort()).toEqual(["serve", "worker"]);
    // labels are bounded: no run or thread id anywhere
    const names = await prom.query('{__name__=~"devmind_.+"}');
    expect(names.length).toBeGreaterThan(0);
    expect(names.some((series) => Object.keys(series.metric).some((label) => /run_id|thread_id/.test(label)))).toBe(false);
    // the server counted its own responses (the 401s and 403s above among them)
    expect(await sum('devmind_http_responses_total{job="serve",code="401"}')).toBeGreaterThanOrEqual(1);
  }, 240_000);

  it("a worker whose --metrics-port is taken exits 2 saying so", async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", () => resolve()));
    const port = (taken.address() as { port: number }).port;
    try {
      const result = await runCli(["worker", "--metrics-port", String(port)], env, { timeoutMs: 60_000 });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`--metrics-port: cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
      expect(result.stdout).not.toContain("worker ready");
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, 90_000);
});
