/**
 * `devmind crons list|create|delete` against the configured database, each command in its own
 * process: a cron created with a project's graph, listed (text and JSON), refused when invalid
 * (exit 2 naming the field), and deleted.
 */
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { writeFileSync } from "node:fs";
import { describe, expect } from "vitest";
import { runCli } from "../helpers/cli.js";
import { cliContexts, ndjson } from "../helpers/cli-env.js";
import { CHILD_ENGINE, itWithPostgres } from "../helpers/databases.js";

const EXAMPLES = resolve(fileURLToPath(new URL("../../examples/", import.meta.url)));
const REVIEW_CONFIG = join(EXAMPLES, "approval-graph", "langgraph.json");
const context = cliContexts();

// the CLI is above the runtime seam: both engines are covered below it (graph-runs, crons)
describe.each([CHILD_ENGINE])("devmind crons on %s", (backend) => {
  itWithPostgres("creates, lists and deletes crons; refuses bad schedules, time zones and graphs", async () => {
    const ctx = context(backend);
    const inputFile = join(ctx.dir, "input.json");
    writeFileSync(inputFile, JSON.stringify({ topic: "nightly digest" }));
    const created = await runCli(
      ["crons", "create", "--config", REVIEW_CONFIG, "--graph", "review", "--schedule", "*/5 * * * *", "--timezone", "Europe/Paris", "--input", `@${inputFile}`, "--end-time", "2099-01-01T00:00:00Z", "--metadata", '{"team":"ops"}'],
      ctx.env,
      { cwd: ctx.dir },
    );
    expect(created.code, created.stderr).toBe(0);
    const cronId = created.stdout.trim();
    expect(cronId).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.stderr).toContain('scheduled review "*/5 * * * *" (Europe/Paris); next run');

    const agent = await runCli(["crons", "create", "--schedule", "0 9 * * 1-5", "--thread", "standup", "--input", '{"messages":["summarise yesterday"]}', "--json"], ctx.env, { cwd: ctx.dir });
    expect(agent.code, agent.stderr).toBe(0);
    const agentCron = ndjson(agent.stdout)[0] as { cron_id: string; assistant_id: string; thread_id: string; timezone: string | null };
    expect(agentCron).toMatchObject({ assistant_id: "agent", thread_id: "standup", timezone: null });

    const [listed, json] = await Promise.all([
      runCli(["crons", "list"], ctx.env, { cwd: ctx.dir }),
      runCli(["crons", "list", "--graph", "review", "--json"], ctx.env, { cwd: ctx.dir }),
    ]);
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.trim().split("\n");
    expect(lines.map((line) => line.split(/\s+/)[0])).toEqual([agentCron.cron_id, cronId]);
    expect(lines[1]).toContain("*/5 * * * * Europe/Paris");
    expect(lines[1]).toContain("new thread");
    expect(lines[0]).toContain("standup");
    expect(ndjson(json.stdout)).toMatchObject([{ cron_id: cronId, assistant_id: "review", end_time: "2099-01-01T00:00:00.000Z", metadata: { team: "ops" }, payload: { input: { topic: "nightly digest" } } }]);

    // refusals, side by side: none of them creates anything
    const [badSchedule, badZone, badGraph, noInput] = await Promise.all([
      runCli(["crons", "create", "--schedule", "*/5 * * *", "--input", '{"messages":["x"]}'], ctx.env, { cwd: ctx.dir }),
      runCli(["crons", "create", "--schedule", "* * * * *", "--timezone", "Atlantis/Capital", "--input", '{"messages":["x"]}'], ctx.env, { cwd: ctx.dir }),
      runCli(["crons", "create", "--schedule", "* * * * *", "--graph", "missing", "--input", "{}"], ctx.env, { cwd: ctx.dir }),
      runCli(["crons", "create", "--schedule", "* * * * *"], ctx.env, { cwd: ctx.dir }),
    ]);
    expect(badSchedule.code).toBe(2);
    expect(badSchedule.stderr).toContain("schedule");
    expect(badZone.code).toBe(2);
    expect(badZone.stderr).toContain("timezone");
    expect(badGraph.code).toBe(2);
    expect(noInput.code).toBe(2);

    const deleted = await runCli(["crons", "delete", cronId], ctx.env, { cwd: ctx.dir });
    expect(deleted.code, deleted.stderr).toBe(0);
    const again = await runCli(["crons", "delete", cronId], ctx.env, { cwd: ctx.dir });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain(cronId);
    const after = await runCli(["crons", "list", "--json"], ctx.env, { cwd: ctx.dir });
    expect(ndjson(after.stdout).map((cron) => cron["cron_id"])).toEqual([agentCron.cron_id]);
  });
});
