import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { z } from "zod";
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
    // the form from the graph's input schema: an Annotation state's channels, untyped (JSON or text)
    await expect.poll(() => fieldsOf(page), { timeout: UI_TIMEOUT }).toEqual(["topic:free", "draft:free", "outcome:free"]);
    await page.getByLabel("topic").fill(HOSTILE);
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
    expect(run?.input).toEqual({ topic: HOSTILE });
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

  it("builds the start form from a typed input schema, checks it before sending, and the run gets that input", async () => {
    server = await startTestServer(owner, [], { apiKeys: "", workers: 1, graphs: { agent: false, brief: briefGraph, review: reviewGraph, fan: fanGraph } });
    const { page, probe } = await open(server.url);
    await page.getByTestId("graph-picker").selectOption("brief");
    await expect.poll(() => fieldsOf(page), { timeout: UI_TIMEOUT }).toEqual(["topic:string", "depth:number", "tags:strings", "mode:enum", "draft:boolean", "extra:json", "summary:string"]);
    // LangGraph's input schema makes every field optional (an input is an update): none marked required
    expect(await page.locator(".input-row .required").count()).toBe(0);

    // checked before sending: nothing reaches the server
    await page.getByLabel("topic").fill("durable runs");
    await page.getByLabel("depth").fill("deep");
    await page.getByLabel("extra").fill("[1]");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await expect.poll(() => page.getByTestId("field-error").allTextContents()).toEqual(["", "depth must be a number.", "", "", "", "extra must be a JSON object.", ""]);
    expect(await page.locator("#form-error").textContent()).toBe("depth must be a number. extra must be a JSON object.");
    expect(await page.getByLabel("depth").getAttribute("aria-invalid")).toBe("true");
    expect(await server.runtime.runs.list()).toEqual([]);

    await page.getByLabel("depth").fill("3");
    await page.getByLabel("tags").fill("ops\ndocs\n");
    await page.getByLabel("mode").selectOption("deep");
    await page.getByLabel("draft").check();
    await page.getByLabel("extra").fill('{"a": 1}');
    await shot(page, "web-form-typed.png");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await expect.poll(async () => (await server?.runtime.runs.list())?.[0]?.status, { timeout: UI_TIMEOUT }).toBe("success");
    const [run] = await server.runtime.runs.list();
    expect(run?.input).toEqual({ topic: "durable runs", depth: 3, tags: ["ops", "docs"], mode: "deep", draft: true, extra: { a: 1 } });
    await expect.poll(async () => JSON.parse((await page.getByTestId("state-json").textContent()) || "null"), { timeout: UI_TIMEOUT }).toMatchObject({ topic: "durable runs", depth: 3, summary: "durable runs at depth 3 (deep)" });
    // the form was emptied for the next run; the list names the graph and the input's start
    expect(await page.getByLabel("topic").inputValue()).toBe("");
    const item = page.locator(`[data-testid="runs-list"] li[data-run-id="${run?.run_id}"]`);
    await expect.poll(() => item.getByTestId("run-item-label").textContent(), { timeout: UI_TIMEOUT }).toBe("durable runs · depth 3 · tags ops, docs · deep · draft true · extra {…}");
    expect(await item.getByTestId("run-item-graph").textContent()).toBe("brief");
    expect(await item.getByTestId("run-item-status").textContent()).toBe("finished");
    await shot(page, "web-form-typed-done.png");

    // a wide fan-out is drawn with every edge around the boxes (graph-layout.js; its unit test checks the geometry)
    await page.getByTestId("graph-picker").selectOption("fan");
    await page.getByLabel("topic").fill("eight ways");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await expect.poll(() => page.getByTestId("stop-reason").textContent(), { timeout: UI_TIMEOUT }).toBe("completed");
    await expect.poll(() => page.getByTestId("graph-node").count(), { timeout: UI_TIMEOUT }).toBe(FAN_WORKERS.length + 5);
    expect(await page.locator("path.graph-edge").count()).toBe(1 + 2 * FAN_WORKERS.length + 1 + 1 + 2);
    await shot(page, "web-graph-fan-out.png");
    expect(probe.pageErrors).toEqual([]);
    expect(probe.consoleErrors).toEqual([]);
    expect(probe.failedResponses).toEqual([]);
  }, TEST_MS);
});

/** The start form's fields, as `name:kind`. */
async function fieldsOf(page: Page): Promise<string[]> {
  return page.getByTestId("input-field").evaluateAll((nodes: unknown[]) => nodes.map((node) => node as { getAttribute(name: string): string | null }).map((node) => `${node.getAttribute("data-field")}:${node.getAttribute("data-kind")}`));
}

/** Saves a screenshot and says where. */
async function shot(page: Page, name: string): Promise<void> {
  console.log(`screenshot: ${await saveScreenshot(page, name)}`);
}

/** A graph with a typed (Zod) input: the form gets a control per field. */
const briefGraph = new StateGraph(
  z.object({
    topic: z.string(),
    depth: z.number(),
    tags: z.array(z.string()).optional(),
    mode: z.enum(["fast", "deep"]).optional(),
    draft: z.boolean().optional(),
    extra: z.object({ a: z.number() }).optional(),
    summary: z.string().optional(),
  }),
)
  .addNode("write", (state) => ({ summary: `${state.topic} at depth ${state.depth} (${state.mode ?? "fast"})` }))
  .addEdge(START, "write")
  .addEdge("write", END)
  .compile();

const FanState = Annotation.Root({
  topic: Annotation<string>(),
  done: Annotation<string[]>({ reducer: (all, more) => all.concat(more), default: () => [] }),
});
const FAN_WORKERS = Array.from({ length: 8 }, (_, i) => `worker_${i + 1}`);
/** A wide fan-out: split to eight workers (or straight to the end), a join, a check that could loop back. */
const fanGraph = (() => {
  const builder = new StateGraph(FanState).addNode("split", () => ({}));
  for (const name of FAN_WORKERS) builder.addNode(name, () => ({ done: [name] }));
  return builder
    .addNode("join", () => ({}))
    .addNode("check", () => ({}))
    .addEdge(START, "split")
    .addConditionalEdges("split", (state) => (state.topic === "" ? END : (FAN_WORKERS as never)), [...FAN_WORKERS, END] as never)
    .addEdge(FAN_WORKERS as never, "join")
    .addEdge("join", "check")
    .addConditionalEdges("check", (state) => (state.done.length >= FAN_WORKERS.length ? END : "split"), ["split", END])
    .compile();
})();
