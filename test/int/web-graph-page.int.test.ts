import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { graph as reviewGraph } from "../../examples/approval-graph/graph.js";
import { graph as researchGraph } from "../../examples/parallel-research/graph.js";
import type { Database } from "../../src/db/types.js";
import { describeWithBrowser, launchChromium, openProbedPage, saveScreenshot, type PageProbe } from "../helpers/browser.js";
import { BACKENDS, openBackend } from "../helpers/databases.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// The web page at / for graphs other than the agent (CONTRACT section 8, last sentence), in the
// real Debian chromium: pick a graph, start it with a JSON input, watch its node timeline and
// state, resume its interrupt with a JSON value; graph text stays text.

const UI_TIMEOUT = 20_000;
const TEST_MS = 120_000;
const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';

describeWithBrowser.each(BACKENDS)("web page with user graphs on %s", (backend) => {
  let owner: Database;
  let browser: Browser;
  let server: TestServer | undefined;

  beforeAll(async () => {
    owner = await openBackend(backend);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await owner.close();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function open(url: string): Promise<{ page: Page; probe: PageProbe }> {
    const opened = await openProbedPage(browser, url);
    const response = await opened.page.goto(`${url}/`);
    expect(response?.status()).toBe(200);
    return opened;
  }

  it("starts example (a) with a JSON input, shows its nodes, state and interrupt, and resumes it with a JSON value", async () => {
    server = await startTestServer(owner, [], { apiKeys: "", workers: 1, graphs: { agent: false, review: reviewGraph, research: researchGraph } });
    const { page, probe } = await open(server.url);

    const picker = page.getByTestId("graph-picker");
    await expect.poll(() => picker.locator("option").allTextContents(), { timeout: UI_TIMEOUT }).toEqual(["review", "research"]);
    await picker.selectOption("review");
    await page.getByLabel("Input (JSON)").fill("{not json");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await expect.poll(() => page.locator("#form-error").textContent()).toBe("The input is not valid JSON.");
    expect(await server.runtime.runs.list()).toEqual([]);

    await page.getByLabel("Input (JSON)").fill(JSON.stringify({ topic: HOSTILE }));
    await page.getByRole("button", { name: "Run", exact: true }).click();

    const interrupt = page.getByTestId("interrupt");
    await interrupt.waitFor({ timeout: UI_TIMEOUT });
    // the run ended at the interrupt (LangGraph Platform's model): success, stop reason interrupt
    await expect.poll(() => page.getByTestId("run-status").textContent(), { timeout: UI_TIMEOUT }).toBe("success");
    await expect.poll(() => page.getByTestId("stop-reason").textContent(), { timeout: UI_TIMEOUT }).toBe("interrupt");
    // the value as a readable tree: one line per field
    expect((await interrupt.getByTestId("interrupt-value").locator(".jt-leaf").allTextContents()).sort()).toEqual([`draft: "A short note about ${HOSTILE}."`, 'question: "Send this draft?"']);
    await expect.poll(() => page.getByTestId("node-line").allTextContents(), { timeout: UI_TIMEOUT }).toEqual([expect.stringContaining("Node write finished"), expect.stringContaining("Node review interrupted")]);
    await expect.poll(() => page.getByTestId("custom-line").count(), { timeout: UI_TIMEOUT }).toBe(1);
    await expect.poll(async () => JSON.parse((await page.getByTestId("state-json").textContent()) || "null"), { timeout: UI_TIMEOUT }).toEqual({ topic: HOSTILE, draft: `A short note about ${HOSTILE}.`, outcome: null });
    await saveScreenshot(page, "web-graph-interrupt.png");

    await interrupt.getByTestId("resume-value").fill("{oops");
    await interrupt.getByTestId("resume-button").click();
    await expect.poll(() => interrupt.getByTestId("resume-error").textContent()).toBe("The resume value is not valid JSON.");
    await interrupt.getByTestId("resume-value").fill('{"approved": true}');
    await interrupt.getByTestId("resume-button").click();

    // the resume is a new run, which the same view goes on with
    await expect.poll(() => page.getByTestId("stop-reason").textContent(), { timeout: UI_TIMEOUT }).toBe("completed");
    await expect.poll(() => page.getByTestId("run-status").textContent(), { timeout: UI_TIMEOUT }).toBe("success");
    await expect.poll(async () => JSON.parse((await page.getByTestId("state-json").textContent()) || "null")?.outcome, { timeout: UI_TIMEOUT }).toBe(`sent: A short note about ${HOSTILE}.`);
    expect(await page.getByTestId("interrupt-panel").isHidden()).toBe(true);
    await expect.poll(() => page.getByTestId("node-line").allTextContents(), { timeout: UI_TIMEOUT }).toEqual([
      expect.stringContaining("Node write finished"),
      expect.stringContaining("Node review interrupted"),
      expect.stringContaining("Node review finished"),
    ]);
    const [resumed, run] = await server.runtime.runs.list();
    expect(resumed).toMatchObject({ graph_id: "review", status: "success", stop_reason: "completed", resumes_run: run?.run_id });
    expect(run).toMatchObject({ graph_id: "review", status: "success", stop_reason: "interrupt", waiting: false });
    await expect.poll(() => page.locator("#run-id").textContent()).toBe(resumed?.run_id);
    expect((await server.runtime.runs.resumes(run?.run_id as string)).map((item) => item.principal)).toEqual(["anonymous"]);

    // the hostile topic is text everywhere: no element made of it, no script ran
    expect(await page.locator("img[src=x]").count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await saveScreenshot(page, "web-graph-done.png");
    expect(probe.pageErrors).toEqual([]);
    expect(probe.dialogs).toEqual([]);
    expect(probe.foreignRequests).toEqual([]);
    expect(probe.consoleErrors).toEqual([]);
    expect(probe.failedResponses).toEqual([]);
  }, TEST_MS);
});
