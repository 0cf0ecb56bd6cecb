/**
 * Unknown outcomes are seen (issue 37 item 5): `devmind run` is SIGKILLed while a non-idempotent
 * call (`run_command`) is in flight, after its side effect and before the ledger recorded its end;
 * `devmind resume` recovers the run, which does not run the call again (TOOL_OUTCOME_UNKNOWN).
 * The run record (`unknown_outcomes`, through the CLI's `--json` and `GET /runs/{id}`), the
 * resume's and `show`'s output, the run list (`devmind runs`) and the web page (run list mark,
 * run header, timeline) all say which call may or may not have taken effect; the exit code is the
 * run's status's (0: it succeeded).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { itWithBrowser, launchChromium, openProbedPage } from "../helpers/browser.js";
import { runCli, spawnCli } from "../helpers/cli.js";
import { cliContext, ndjson, type CliContext } from "../helpers/cli-env.js";
import { spawnServe, type ServeProcess } from "../helpers/server-process.js";
import { BACKENDS } from "../helpers/databases.js";
import { waitUntil } from "../helpers/waits.js";

const CALL = "c_cmd";
const UNKNOWN = [{ tool_call_id: CALL, tool: "run_command" }];

describe.each(BACKENDS)("a run whose process died during a non-idempotent call (%s)", (backend) => {
  let ctx: CliContext;
  let env: Record<string, string>;
  let runId: string;
  let serve: ServeProcess | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    ctx = cliContext(backend);
    const model = ctx.script("unknown.json", [
      // the side effect, then a wait the test ends by writing the release file (after the kill)
      { tool_calls: [{ id: CALL, name: "run_command", args: { command: "echo started >> side.txt; while [ ! -f release ]; do sleep 0.1; done" } }] },
      { content: "the command may or may not have finished" },
    ]);
    // on PostgreSQL the dead process's run is taken over once its lease lapses: a short one
    env = { ...ctx.env, ...model, DEVMIND_AUTO_APPROVE: "run_command", DEVMIND_LEASE_MS: "3000" };
    const child = spawnCli(["run", "run the command", "--json"], env, { cwd: ctx.dir });
    await waitUntil("the command's side effect", () => existsSync(join(ctx.workspace, "side.txt")), 120_000);
    await child.waitFor((stdout) => stdout.includes('"tool.call.started"'), 30_000);
    child.kill("SIGKILL");
    await child.exited;
    writeFileSync(join(ctx.workspace, "release"), "");
    runId = String(ndjson(child.stdout())[0]?.["run_id"]);
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await serve?.stop();
    await ctx?.cleanup();
  }, 60_000);

  it("devmind resume recovers it without running the call again, warns which call's outcome is unknown, exits 0", async () => {
    const resumed = await runCli(["resume", runId], env, { cwd: ctx.dir });
    expect(resumed.stderr).not.toContain("Error");
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain(`run ${runId}: success (completed)`);
    expect(resumed.stdout).toContain(`warning: outcome unknown: run_command (${CALL}) was running when its process stopped or the run was cancelled; it may or may not have taken effect`);
    expect(readFileSync(join(ctx.workspace, "side.txt"), "utf8")).toBe("started\n");
  }, 180_000);

  it("the record carries the call (show --json), show and runs mark the run", async () => {
    const json = await runCli(["show", runId, "--json"], env, { cwd: ctx.dir });
    expect(JSON.parse(json.stdout)).toMatchObject({ run_id: runId, status: "success", stop_reason: "completed", unknown_outcomes: UNKNOWN });
    const text = await runCli(["show", runId], env, { cwd: ctx.dir });
    expect(text.stdout).toContain(`warning: outcome unknown: run_command (${CALL})`);
    const runs = await runCli(["runs"], env, { cwd: ctx.dir });
    const line = runs.stdout.split("\n").find((candidate) => candidate.startsWith(runId));
    expect(line).toContain("[1 outcome unknown] run the command");
  }, 180_000);

  itWithBrowser("GET /runs/{id} carries it; the page marks the run in its list, its header and its timeline", async () => {
    serve = await spawnServe(["--port", "0", "--workers", "0"], env);
    const record = (await (await fetch(`${serve.url}/runs/${runId}`)).json()) as Record<string, unknown>;
    expect(record["unknown_outcomes"]).toEqual(UNKNOWN);
    browser = await launchChromium();
    const { page, probe } = await openProbedPage(browser, serve.url);
    await page.goto(`${serve.url}/#run=${runId}`);
    const mark = page.locator(`li[data-run-id="${runId}"] [data-testid="unknown-outcome"]`);
    await mark.waitFor({ timeout: 30_000 });
    expect(await mark.textContent()).toBe("outcome unknown");
    const header = page.locator('[data-testid="unknown-outcomes"]');
    await header.waitFor({ state: "visible", timeout: 30_000 });
    expect(await header.textContent()).toBe(`Outcome unknown: run_command (${CALL}) may or may not have taken effect.`);
    const event = page.locator('[data-testid="unknown-outcome-event"]');
    await event.waitFor({ timeout: 30_000 });
    expect(await event.textContent()).toContain(`Outcome unknown: run_command (${CALL}) may or may not have taken effect`);
    expect(await page.locator(`.tool[data-status="unknown"]`).count()).toBe(1);
    // another run's list entry has no mark
    expect(await page.locator('[data-testid="unknown-outcome"]').count()).toBe(1);
    expect(probe.pageErrors).toEqual([]);
  }, 180_000);
});
