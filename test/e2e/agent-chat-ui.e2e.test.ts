/**
 * Agent Chat UI, unchanged, against `devmind serve` in Debian's chromium (opt-in: `npm run
 * test:chat-ui`; see test/e2e/agent-chat-ui.ts for where the UI comes from). One server with the
 * scripted model; three threads: approve, edit, reject; a reload of an interrupted thread and of
 * a finished one; a Regenerate of a finished thread's answer. The page must never throw, and log no console error of its own beyond the two
 * React development warnings the UI logs on every load (listed below).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ARTIFACTS_DIR, launchChromium } from "../helpers/browser.js";
import { seedDataDir } from "../helpers/pglite-template.js";
import { spawnServe, type ServeProcess } from "../helpers/server-process.js";
import { AGENT_CHAT_UI_COMMIT, prepareAgentChatUi, startAgentChatUi, type AgentChatUiServer } from "./agent-chat-ui.js";

const KEY = "chat-ui-key-0123456789";
/** Each thread gets the same script: a tool that needs no approval, then one that does, then the answer. */
const SCRIPT = [
  { content: "Let me add those first.", tool_calls: [{ id: "call_add", name: "add", args: { a: 2, b: 3 } }], delay_ms: 200 },
  { content: "The sum is 5. Now I will write the file.", tool_calls: [{ id: "call_write", name: "write_file", args: { path: "sum.txt", content: "5" } }], delay_ms: 200 },
  { content: "All done: the sum is in sum.txt.", delay_ms: 200 },
];
const TASK = "add 2 and 3 and write the sum to sum.txt";
/**
 * Console errors the UI logs by itself on every page load, before it talks to any server: an SVG
 * attribute of its logo (`clip-path` in JSX) and a hydration mismatch of its server-rendered
 * shell. Anything else fails the test.
 */
const UI_OWN_ERRORS = [/^Invalid DOM property `%s`\. Did you mean `%s`\? clip-path clipPath/, /^A tree hydrated but some attributes of the server rendered HTML didn't match/];
/** Bound of every wait for something on the page (the dev server compiles on first use). */
const PAGE_WAIT_MS = 120_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

describe("Agent Chat UI against devmind serve", () => {
  const dirs: string[] = [];
  let serve: ServeProcess | undefined;
  let ui: AgentChatUiServer | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext;
  let workspace: string;
  const consoleErrors: string[] = [];
  const pageErrors: string[] = [];
  const foreignRequests: string[] = [];

  const api = async (path: string): Promise<unknown> => {
    const response = await fetch(`${serve?.url}${path}`, { headers: { "x-api-key": KEY } });
    expect(response.status).toBe(200);
    return response.json();
  };
  const shot = async (page: Page, name: string): Promise<void> => {
    await page.screenshot({ path: join(ARTIFACTS_DIR, `agent-chat-ui-${name}.png`), fullPage: true });
  };

  beforeAll(async () => {
    const versions = prepareAgentChatUi();
    console.log(`Agent Chat UI ${AGENT_CHAT_UI_COMMIT.slice(0, 12)} with ${JSON.stringify(versions)}`);
    const dir = mkdtempSync(join(tmpdir(), "devmind-chat-ui-"));
    dirs.push(dir);
    seedDataDir(join(dir, "data"));
    workspace = join(dir, "workspace");
    writeFileSync(join(dir, "script.json"), JSON.stringify(SCRIPT));
    serve = await spawnServe(["--port", "0", "--workers", "2"], {
      DEVMIND_MODEL: `scripted:${join(dir, "script.json")}`,
      DEVMIND_API_KEYS: `ui=${KEY}`,
      DEVMIND_DATA_DIR: join(dir, "data"),
      DEVMIND_WORKSPACE: workspace,
      DEVMIND_MODEL_MAX_RETRIES: "0",
      LOG_LEVEL: "warn",
    });
    ui = await startAgentChatUi(serve.url, await freePort());
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    // the key as the UI's settings form stores it
    // (a string: this file is compiled without the DOM library)
    await context.addInitScript(`window.localStorage.setItem("lg:chat:apiKey", ${JSON.stringify(KEY)})`);
    const allowed = [ui.url, serve.url];
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (allowed.some((origin) => url.startsWith(`${origin}/`)) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
      foreignRequests.push(url);
      return route.abort();
    });
  }, 1_500_000);

  afterAll(async () => {
    await browser?.close();
    await ui?.stop();
    await serve?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** The `command.resume` values the UI sent, in order. */
  const resumes: unknown[] = [];
  /** The run requests the UI sent with a `checkpoint` (Regenerate), in order. */
  const fromCheckpoint: { input?: unknown; checkpoint?: { checkpoint_id?: string } }[] = [];
  const openPage = async (): Promise<Page> => {
    const page = await context.newPage();
    page.on("request", (request) => {
      if (request.method() !== "POST" || !request.url().endsWith("/runs/stream")) return;
      const body = request.postDataJSON() as { input?: unknown; command?: { resume?: unknown }; checkpoint?: { checkpoint_id?: string } } | null;
      if (body?.command?.resume !== undefined) resumes.push(body.command.resume);
      if (body?.checkpoint !== undefined && body.checkpoint !== null) fromCheckpoint.push(body);
    });
    page.on("console", (message) => {
      if (message.type() !== "error") return;
      const text = message.text();
      if (!UI_OWN_ERRORS.some((pattern) => pattern.test(text))) consoleErrors.push(text);
    });
    page.on("pageerror", (error) => pageErrors.push(error.message));
    return page;
  };

  /** Sends the task in a new thread and waits for the approval; returns the thread id. */
  const startThread = async (page: Page): Promise<string> => {
    await page.goto(ui?.url as string, { timeout: 600_000 });
    const box = page.getByPlaceholder("Type your message...");
    await box.waitFor({ timeout: PAGE_WAIT_MS });
    // the thread list in the side bar shows earlier threads under the same first message
    const listedBefore = await page.getByText(TASK, { exact: true }).count();
    await box.fill(TASK);
    await box.press("Enter");
    // the tool call that needed no approval, with its result, then the approval form
    await page.getByText("Tool Result: add").waitFor({ timeout: PAGE_WAIT_MS });
    await page.getByRole("button", { name: "Approve" }).waitFor({ timeout: PAGE_WAIT_MS });
    // The UI refreshes its thread list 4 s after it created a thread. That re-renders the page,
    // and every render of useStream (SDK 1.15) hands out a new interrupt object, which makes the
    // approval form reset what was typed into it (the UI's own behaviour, with any server):
    // interact only once the new thread is listed (the chat's copy plus the side bar's).
    await expect.poll(() => page.getByText(TASK, { exact: true }).count(), { timeout: PAGE_WAIT_MS }).toBeGreaterThanOrEqual(listedBefore + 2);
    const threadId = new URL(page.url()).searchParams.get("threadId");
    expect(threadId).toMatch(/^[0-9a-f-]{36}$/);
    return threadId as string;
  };

  const expectApprovalForm = async (page: Page): Promise<void> => {
    // the HITL form, not the generic raw-JSON interrupt view
    await expect(page.getByRole("button", { name: "Approve" }).count()).resolves.toBe(1);
    await expect(page.getByRole("button", { name: "Submit rejection" }).count()).resolves.toBe(1);
    await expect(page.getByText("Human Interrupt").count()).resolves.toBe(0);
    // the arguments are editable fields, one per argument
    const values = await Promise.all((await page.locator("textarea").all()).map((area) => area.inputValue()));
    expect(values).toEqual(expect.arrayContaining(["sum.txt", "5"]));
  };

  /** The approval decisions stored for the thread's only run: [decision, by, args]. */
  const decisionsOf = async (threadId: string): Promise<unknown[][]> => {
    const runs = await runsOf(threadId);
    expect(runs.length).toBe(1);
    const response = await fetch(`${serve?.url}/runs/${runs[0]?.run_id}/events?follow=0`, { headers: { "x-api-key": KEY } });
    return (await response.text())
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)) as { type: string; by?: string; decision?: string; args?: unknown })
      .filter((event) => event.type === "approval.decided")
      .map((event) => [event.decision, event.by, event.args ?? null]);
  };
  const runsOf = async (threadId: string): Promise<{ run_id: string; status: string }[]> => (await api(`/threads/${threadId}/runs`)) as { run_id: string; status: string }[];
  const waitForRunStatus = async (page: Page, threadId: string, status: string): Promise<void> => {
    for (const deadline = Date.now() + PAGE_WAIT_MS; Date.now() < deadline; ) {
      const runs = await runsOf(threadId);
      if (runs[0]?.status === status) return;
      await page.waitForTimeout(250);
    }
    throw new Error(`thread ${threadId}: its run did not reach ${status}`);
  };

  it("chat with tool calls; approve: the run finishes and the thread reloads; Regenerate answers again on a new branch", async () => {
    const page = await openPage();
    const threadId = await startThread(page);
    await expectApprovalForm(page);
    await shot(page, "1-approval");
    expect((await runsOf(threadId)).map((r) => r.status)).toEqual(["interrupted"]);

    // reload while it waits: the approval comes back from the thread's state
    await page.reload({ timeout: 600_000 });
    await page.getByRole("button", { name: "Approve" }).waitFor({ timeout: PAGE_WAIT_MS });
    await expectApprovalForm(page);

    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByText("All done: the sum is in sum.txt.").waitFor({ timeout: PAGE_WAIT_MS });
    await page.getByText("Tool Result: write_file").waitFor({ timeout: PAGE_WAIT_MS });
    await waitForRunStatus(page, threadId, "success");
    expect(readFileSync(join(workspace, "sum.txt"), "utf8")).toBe("5");
    // the same run continued (devmind resumes it), decided by the key's principal
    expect(resumes).toEqual([{ decisions: [{ type: "approve" }] }]);
    expect((await decisionsOf(threadId)).map(([decision, by]) => [decision, by])).toEqual([["approve", "ui"]]);
    await expect(page.getByRole("button", { name: "Approve" }).count()).resolves.toBe(0);
    // every message once: one human, three answers
    await expect(page.getByText(TASK, { exact: true }).count()).resolves.toBeGreaterThanOrEqual(1);
    await expect(page.getByText("The sum is 5. Now I will write the file.", { exact: true }).count()).resolves.toBe(1);
    await expect(page.getByText("All done: the sum is in sum.txt.", { exact: true }).count()).resolves.toBe(1);
    await shot(page, "2-approved");

    // reload the finished thread: the whole conversation, no approval
    await page.reload({ timeout: 600_000 });
    await page.getByText("All done: the sum is in sum.txt.").waitFor({ timeout: PAGE_WAIT_MS });
    await expect(page.getByText("Tool Result: add").count()).resolves.toBe(1);
    await expect(page.getByText("Tool Result: write_file").count()).resolves.toBe(1);
    await expect(page.getByRole("button", { name: "Approve" }).count()).resolves.toBe(0);
    await shot(page, "3-reloaded");

    // Regenerate the final answer: a run without input from the answer's parent checkpoint; the
    // model answers again on a new branch, which the UI shows with its branch switcher
    type StateMessage = { id: string; type: string; content: unknown };
    const answered = ((await api(`/threads/${threadId}/state`)) as { values: { messages: StateMessage[] } }).values.messages;
    const answer = page.getByText("All done: the sum is in sum.txt.", { exact: true });
    await answer.hover();
    await page.getByRole("button", { name: "Refresh" }).last().click();
    await expect.poll(async () => (await runsOf(threadId)).length, { timeout: PAGE_WAIT_MS }).toBe(2);
    await waitForRunStatus(page, threadId, "success");
    await page.getByText("2 / 2", { exact: true }).waitFor({ timeout: PAGE_WAIT_MS });
    expect(fromCheckpoint.map((body) => [body.input ?? null, typeof body.checkpoint?.checkpoint_id])).toEqual([[null, "string"]]);
    const regenerated = ((await api(`/threads/${threadId}/state`)) as { values: { messages: StateMessage[] } }).values.messages;
    // the same conversation up to the answer, then a new answer message (the scripted model says the same)
    expect(regenerated.slice(0, -1).map((m) => m.id)).toEqual(answered.slice(0, -1).map((m) => m.id));
    expect([regenerated.at(-1)?.type, regenerated.at(-1)?.content, regenerated.at(-1)?.id === answered.at(-1)?.id]).toEqual(["ai", "All done: the sum is in sum.txt.", false]);
    await expect(answer.count()).resolves.toBe(1);
    // the regenerate ran the model only: no tool ran again, nothing waited for approval
    const [regenerateRun] = await runsOf(threadId);
    const types = (await (await fetch(`${serve?.url}/runs/${regenerateRun?.run_id}/events?follow=0`, { headers: { "x-api-key": KEY } })).text())
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => (JSON.parse(line.slice(6)) as { type: string }).type);
    expect(types.filter((type) => type.startsWith("tool.") || type.startsWith("approval."))).toEqual([]);
    expect(types).toContain("model.finished");
    await shot(page, "3b-regenerated");
    await page.close();
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });

  it("edit: the tool runs with the edited arguments", async () => {
    const page = await openPage();
    const threadId = await startThread(page);
    const areas = await page.locator("textarea").all();
    const values = await Promise.all(areas.map((area) => area.inputValue()));
    const content = areas[values.indexOf("5")];
    expect(content).toBeDefined();
    await content?.fill("55");
    // an edited form submits an edit instead of an approval; submitted from the field at once
    // (Ctrl+Enter), as a re-render in between would reset the form (see startThread)
    await content?.press("Control+Enter");
    await page.getByText("All done: the sum is in sum.txt.").waitFor({ timeout: PAGE_WAIT_MS });
    await waitForRunStatus(page, threadId, "success");
    expect(resumes.at(-1)).toMatchObject({ decisions: [{ type: "edit", edited_action: { name: "write_file", args: { path: "sum.txt", content: "55" } } }] });
    expect((await decisionsOf(threadId)).map(([decision, by]) => [decision, by])).toEqual([["edit", "ui"]]);
    expect(readFileSync(join(workspace, "sum.txt"), "utf8")).toBe("55");
    await shot(page, "4-edited");
    await page.close();
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });

  it("reject with a reason: the tool does not run, the model is told, the run finishes", async () => {
    const page = await openPage();
    const threadId = await startThread(page);
    const reason = page.getByPlaceholder("Share feedback with the agent...");
    await reason.fill("not this file");
    // submitted from the field at once (Ctrl+Enter), as a re-render in between would reset the form
    await reason.press("Control+Enter");
    await page.getByText("All done: the sum is in sum.txt.").waitFor({ timeout: PAGE_WAIT_MS });
    await waitForRunStatus(page, threadId, "success");
    await shot(page, "5-rejected");
    expect(resumes.at(-1)).toEqual({ decisions: [{ type: "reject", message: "not this file" }] });
    expect((await decisionsOf(threadId)).map(([decision, by]) => [decision, by])).toEqual([["reject", "ui"]]);
    // the file keeps the edited thread's content
    expect(readFileSync(join(workspace, "sum.txt"), "utf8")).toBe("55");
    const state = (await api(`/threads/${threadId}/state`)) as { values: { messages: { type: string; content: unknown }[] } };
    const tool = state.values.messages.filter((m) => m.type === "tool").pop();
    expect(JSON.parse(String(tool?.content))).toMatchObject({ ok: false, error: { code: "APPROVAL_REJECTED" } });
    await expect(page.getByText("APPROVAL_REJECTED").count()).resolves.toBeGreaterThanOrEqual(1);
    await page.close();
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
    expect(foreignRequests).toEqual([]);
  });
});
