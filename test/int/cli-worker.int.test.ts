import { describe, expect, it } from "vitest";
import { runCli, spawnCli } from "../helpers/cli.js";
import { cliContexts, ndjson } from "../helpers/cli-env.js";
import { BACKENDS, itOn } from "../helpers/databases.js";

const context = cliContexts();

describe.each(BACKENDS)("devmind worker and the embedded-database rule on %s", (backend) => {
  itOn(backend, "pglite")("a second process on a data directory in use exits 2 and says to set DATABASE_URL", async () => {
    const ctx = context(backend);
    const model = ctx.script("slow.json", [{ content: "never", delay_ms: 60_000 }]);
    const holder = spawnCli(["run", "think slowly", "--json"], { ...ctx.env, ...model }, { cwd: ctx.dir });
    await holder.waitFor((out) => out.includes('"type":"model.started"'));
    // the three refused processes side by side: none of them may open the directory
    const attempts = [["runs"], ["worker"], ["run", "another task"]];
    const refused = await Promise.all(attempts.map((args) => runCli(args, { ...ctx.env, ...model }, { cwd: ctx.dir })));
    for (const [index, args] of attempts.entries()) {
      const second = refused[index] as Awaited<ReturnType<typeof runCli>>;
      expect(second.code, args.join(" ")).toBe(2);
      expect(second.stderr).toContain(`in use by process ${holder.pid}`);
      expect(second.stderr).toContain("[DATABASE_LOCKED]");
      expect(second.stderr).toContain("set DATABASE_URL");
      expect(second.stdout).toBe("");
    }
    holder.kill("SIGINT");
    const ended = await holder.exited;
    expect(ended.code).toBe(4);
    const runs = await runCli(["runs", "--json"], ctx.env, { cwd: ctx.dir });
    expect(ndjson(runs.stdout).map((run) => run["status"])).toEqual(["interrupted"]);
  }, 300_000);

  it("run --detach only queues; a `devmind worker` process runs it and says so; SIGTERM drains and exits 0", async () => {
    const ctx = context(backend);
    const model = ctx.script("add.json", [{ tool_calls: [{ id: "c1", name: "add", args: { a: 1, b: 1 } }] }, { content: "two" }]);
    const queued = await runCli(["run", "add 1 and 1", "--detach"], { ...ctx.env, ...model }, { cwd: ctx.dir });
    expect(queued.code).toBe(0);
    const runId = queued.stdout.trim();
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);
    expect(queued.stderr).toContain(`devmind events ${runId} --follow`);
    const pending = await runCli(["show", runId, "--json"], ctx.env, { cwd: ctx.dir });
    expect(JSON.parse(pending.stdout)).toMatchObject({ status: "pending", attempt: 0 });

    const worker = spawnCli(["worker", "--concurrency", "1"], { ...ctx.env, ...model }, { cwd: ctx.dir });
    await worker.waitFor((out) => out.includes("worker ready: 1 slot"));
    if (backend === "postgres") {
      // another process follows the run while the worker executes it
      const follow = await runCli(["events", runId, "--follow", "--json"], ctx.env, { cwd: ctx.dir });
      expect(follow.code).toBe(0);
      expect(ndjson(follow.stdout).map((e) => e["type"]).at(-1)).toBe("run.succeeded");
    }
    await worker.waitFor((out) => out.includes(`worker: run ${runId} success\n`));
    expect(worker.stdout()).toContain(`worker: run ${runId} started (attempt 1)\n`);
    worker.kill("SIGTERM");
    const stopped = await worker.exited;
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toContain("worker stopped");
    const done = await runCli(["show", runId, "--json"], ctx.env, { cwd: ctx.dir });
    expect(JSON.parse(done.stdout)).toMatchObject({ status: "success", answer: "two", model_rounds: 2, tool_calls: 1, attempt: 1 });
  }, 300_000);

  itOn(backend, "postgres")("`run --model X` next to a running worker is executed by the CLI's own process with X, never by the worker", async () => {
    const ctx = context(backend);
    const workerModel = ctx.script("worker.json", [{ content: "answered by the worker's model" }]);
    const cliModel = ctx.script("cli.json", [{ tool_calls: [{ id: "c1", name: "add", args: { a: 2, b: 3 } }] }, { content: "answered by the CLI's model" }]);
    const worker = spawnCli(["worker", "--concurrency", "2"], { ...ctx.env, ...workerModel }, { cwd: ctx.dir });
    await worker.waitFor((out) => out.includes("worker ready: 2 slots"));
    for (let i = 0; i < 3; i += 1) {
      const cli = spawnCli(["run", "add 2 and 3", "--json", "--model", cliModel["DEVMIND_MODEL"] as string], ctx.env, { cwd: ctx.dir });
      const ended = await cli.exited;
      expect(ended.code, ended.stderr).toBe(0);
      const lines = ndjson(ended.stdout);
      const started = lines.filter((e) => e["type"] === "run.started");
      expect(started).toHaveLength(1);
      expect(String(started[0]?.["worker"]).split(":")[1]).toBe(String(cli.pid));
      expect(String(started[0]?.["worker"])).not.toMatch(/:worker$/);
      expect(lines.at(-1)).toMatchObject({ type: "result", status: "success", answer: "answered by the CLI's model", tool_calls: 1 });
    }
    expect(worker.stdout()).not.toContain("started (attempt");
    worker.kill("SIGTERM");
    expect((await worker.exited).code).toBe(0);
  }, 300_000);
});
