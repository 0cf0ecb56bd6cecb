/**
 * Agent Chat UI, unchanged, against `devmind serve` in Debian's chromium (opt-in: `npm run
 * test:chat-ui`; see test/e2e/agent-chat-ui.ts for where the UI comes from), for two graphs, each
 * on a server of its own with the scripted model: devmind's built-in agent, and example (c)
 * (`examples/hitl-agent`: LangChain's `createAgent` with its human-in-the-loop middleware, served
 * from its langgraph.json) — the UI reaches the second through its `apiUrl` / `assistantId`
 * query parameters. For each graph, a thread per flow: approve (with a reload of the waiting and
 * of the finished thread, then Regenerate of the answer), edit, reject with a reason, Mark as
 * Resolved, and the edit of a human message (a fork before it). The page must never throw, and
 * log no console error of its own (a duplicate React key included) beyond the two React
 * development warnings the UI logs on every load (listed below).
 *
 * The assertions hold in both run models: a resume continuing the interrupted run, or a new run
 * on the thread (the thread is `interrupted` while it waits either way).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ARTIFACTS_DIR, launchChromium } from "../helpers/browser.js";
import { seedDataDir } from "../helpers/pglite-template.js";
import { spawnServe, type ServeProcess } from "../helpers/server-process.js";
import { AGENT_CHAT_UI_COMMIT, prepareAgentChatUi, startAgentChatUi, type AgentChatUiServer } from "./agent-chat-ui.js";

const KEY = "chat-ui-key-0123456789";
const HITL_CONFIG = resolve(fileURLToPath(new URL("../../examples/hitl-agent/langgraph.json", import.meta.url)));
/** The follow-up every flow that edits a human message sends once the task is done, and what it is edited to. */
const FOLLOW_UP = "thanks, that is all";
const FOLLOW_UP_EDITED = "thank you, that is all";
const FOLLOW_UP_ANSWER = "You are welcome.";
/**
 * Console errors the UI logs by itself on every page load, before it talks to any server: an SVG
 * attribute of its logo (`clip-path` in JSX) and a hydration mismatch of its server-rendered
 * shell. Anything else fails the test.
 */
const UI_OWN_ERRORS = [/^Invalid DOM property `%s`\. Did you mean `%s`\? clip-path clipPath/, /^A tree hydrated but some attributes of the server rendered HTML didn't match/];
/** Bound of every wait for something on the page (the dev server compiles on first use). */
const PAGE_WAIT_MS = 120_000;

/** One graph the UI talks to, and what its scripted conversation shows. */
interface Target {
  name: string;
  /** The assistant (graph) id. */
  assistant: string;
  /** The model's script: a tool that needs no approval, one that does, the answer, the answer to the follow-up. */
  script: unknown[];
  task: string;
  /** The tool result shown before the approval. */
  firstTool: string;
  /** The tool that waits for approval, its arguments as the form's fields, and one to edit. */
  approvalTool: string;
  approvalArgs: string[];
  edit: { from: string; to: string; args: Record<string, unknown> };
  middleAnswer: string;
  finalAnswer: string;
  /** The file the approved tool writes, and what it holds after an approval / an edit, given what it held before. */
  file: (dir: string) => string;
  writes: (before: string, decided: "approved" | "edited") => string;
  /** `devmind serve` arguments and environment beyond the common ones. */
  serveArgs: string[];
  env: (dir: string) => Record<string, string>;
  /** What the tool message of a rejected call says. */
  rejected: RegExp;
}

const TARGETS: Target[] = [
  {
    name: "the built-in agent",
    assistant: "agent",
    script: [
      { content: "Let me add those first.", tool_calls: [{ id: "call_add", name: "add", args: { a: 2, b: 3 } }], delay_ms: 200 },
      { content: "The sum is 5. Now I will write the file.", tool_calls: [{ id: "call_write", name: "write_file", args: { path: "sum.txt", content: "5" } }], delay_ms: 200 },
      { content: "All done: the sum is in sum.txt.", delay_ms: 200 },
      { content: FOLLOW_UP_ANSWER, delay_ms: 200 },
    ],
    task: "add 2 and 3 and write the sum to sum.txt",
    firstTool: "Tool Result: add",
    approvalTool: "write_file",
    approvalArgs: ["sum.txt", "5"],
    edit: { from: "5", to: "55", args: { path: "sum.txt", content: "55" } },
    middleAnswer: "The sum is 5. Now I will write the file.",
    finalAnswer: "All done: the sum is in sum.txt.",
    file: (dir) => join(dir, "workspace", "sum.txt"),
    // write_file replaces the file
    writes: (_before, decided) => (decided === "approved" ? "5" : "55"),
    serveArgs: [],
    env: (dir) => ({ DEVMIND_WORKSPACE: join(dir, "workspace") }),
    rejected: /APPROVAL_REJECTED/,
  },
  {
    name: "example (c): createAgent with HITL middleware",
    assistant: "notes",
    script: [
      { content: "Let me look it up first.", tool_calls: [{ id: "call_lookup", name: "lookup", args: { term: "durable" } }], delay_ms: 200 },
      { content: "Durable has 7 letters. Now I will note it.", tool_calls: [{ id: "call_note", name: "append_line", args: { line: "durable runs" } }], delay_ms: 200 },
      { content: "Noted: durable runs.", delay_ms: 200 },
      { content: FOLLOW_UP_ANSWER, delay_ms: 200 },
    ],
    task: "look up durable and note it",
    firstTool: "Tool Result: lookup",
    approvalTool: "append_line",
    approvalArgs: ["durable runs"],
    edit: { from: "durable runs", to: "durable runs, edited", args: { line: "durable runs, edited" } },
    middleAnswer: "Durable has 7 letters. Now I will note it.",
    finalAnswer: "Noted: durable runs.",
    file: (dir) => join(dir, "notes.txt"),
    // append_line adds a line to the notes of every thread
    writes: (before, decided) => `${before}${decided === "approved" ? "durable runs" : "durable runs, edited"}\n`,
    serveArgs: ["--config", HITL_CONFIG],
    env: (dir) => ({ NOTES_FILE: join(dir, "notes.txt") }),
    // LangChain's middleware answers a rejected call with the reviewer's message
    rejected: /^not this one$/,
  },
];

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

type StateMessage = { id: string; type: string; content: unknown };

/** A message's text: its content, or the text of its content blocks (the UI sends a human message as blocks). */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return Array.isArray(content) ? content.map((block) => (typeof block === "string" ? block : String((block as { text?: unknown }).text ?? ""))).join("") : "";
}
/** What the file `path` holds, "" when it does not exist. */
function contentOf(path: string): string {
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}
type DevmindRun = { run_id: string; status: string };

/**
 * The lines of a server's log (`LOG_LEVEL=warn`: one JSON object a line on stderr) that say
 * something failed: level error or fatal, anything mentioning a duplicate key, and any line that
 * is not devmind's JSON (an uncaught exception's stack).
 */
function serverErrors(log: string): string[] {
  return log
    .split("\n")
    .filter((line) => line.trim() !== "")
    .filter((line) => {
      if (/duplicate key/i.test(line)) return true;
      try {
        const level = (JSON.parse(line) as { level?: unknown }).level;
        return level === "error" || level === "fatal";
      } catch {
        return true;
      }
    });
}

const dirs: string[] = [];
const serves = new Map<string, { serve: ServeProcess; dir: string }>();
let ui: AgentChatUiServer | undefined;
let browser: Browser | undefined;
let context: BrowserContext;
const consoleErrors: string[] = [];
const pageErrors: string[] = [];
const foreignRequests: string[] = [];
/** Responses of the devmind servers with a status of 400 or more, as `STATUS METHOD PATH`. */
const failedResponses: string[] = [];

beforeAll(async () => {
  const versions = prepareAgentChatUi();
  console.log(`Agent Chat UI ${AGENT_CHAT_UI_COMMIT.slice(0, 12)} with ${JSON.stringify(versions)}`);
  for (const target of TARGETS) {
    const dir = mkdtempSync(join(tmpdir(), "devmind-chat-ui-"));
    dirs.push(dir);
    seedDataDir(join(dir, "data"));
    writeFileSync(join(dir, "script.json"), JSON.stringify(target.script));
    const serve = await spawnServe(
      ["--port", "0", "--workers", "2", ...target.serveArgs],
      {
        DEVMIND_MODEL: `scripted:${join(dir, "script.json")}`,
        DEVMIND_API_KEYS: `ui=${KEY}`,
        DEVMIND_DATA_DIR: join(dir, "data"),
        DEVMIND_MODEL_MAX_RETRIES: "0",
        LOG_LEVEL: "warn",
        ...target.env(dir),
      },
      120_000,
    );
    serves.set(target.assistant, { serve, dir });
  }
  const agentServe = serves.get("agent")?.serve as ServeProcess;
  ui = await startAgentChatUi(agentServe.url, await freePort());
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  // the key as the UI's settings form stores it
  // (a string: this file is compiled without the DOM library)
  await context.addInitScript(`window.localStorage.setItem("lg:chat:apiKey", ${JSON.stringify(KEY)})`);
  const allowed = [ui.url, ...[...serves.values()].map((entry) => entry.serve.url)];
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
  for (const { serve } of serves.values()) await serve.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  expect(foreignRequests).toEqual([]);
});

describe.each(TARGETS)("Agent Chat UI against devmind serve: $name", (target) => {
  const server = (): ServeProcess => serves.get(target.assistant)?.serve as ServeProcess;
  const dir = (): string => serves.get(target.assistant)?.dir as string;
  /** The page of the UI for this target: the agent's server is the UI's default; another graph's is named in the query. */
  const home = (): string => (target.assistant === "agent" ? (ui?.url as string) : `${ui?.url}/?apiUrl=${encodeURIComponent(server().url)}&assistantId=${target.assistant}`);

  const api = async (path: string): Promise<unknown> => {
    const response = await fetch(`${server().url}${path}`, { headers: { "x-api-key": KEY } });
    expect(response.status).toBe(200);
    return response.json();
  };
  const shot = async (page: Page, name: string): Promise<void> => {
    await page.screenshot({ path: join(ARTIFACTS_DIR, `agent-chat-ui-${target.assistant}-${name}.png`), fullPage: true });
  };

  /** The `command` values the UI sent, in order. */
  const commands: { resume?: unknown; goto?: unknown }[] = [];
  /** The run requests the UI sent with a `checkpoint` (Regenerate, a human message's edit), in order. */
  const fromCheckpoint: { input?: unknown; checkpoint?: { checkpoint_id?: string } }[] = [];
  const openPage = async (): Promise<Page> => {
    const page = await context.newPage();
    page.on("request", (request) => {
      if (request.method() !== "POST" || !request.url().endsWith("/runs/stream")) return;
      const body = request.postDataJSON() as { input?: unknown; command?: { resume?: unknown; goto?: unknown }; checkpoint?: { checkpoint_id?: string } } | null;
      if (body?.command !== undefined && body.command !== null) commands.push(body.command);
      if (body?.checkpoint !== undefined && body.checkpoint !== null) fromCheckpoint.push(body);
    });
    page.on("console", (message) => {
      if (message.type() !== "error") return;
      const text = message.text();
      if (!UI_OWN_ERRORS.some((pattern) => pattern.test(text))) consoleErrors.push(text);
    });
    page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("response", (response) => {
      if (response.status() >= 400 && response.url().startsWith(server().url)) failedResponses.push(`${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`);
    });
    return page;
  };
  /** Waits for `text` on the page; on a timeout, a screenshot and the server's refusals say what the page was doing. */
  const waitForText = async (page: Page, text: string, name: string): Promise<void> => {
    try {
      await page.getByText(text).first().waitFor({ timeout: PAGE_WAIT_MS });
    } catch (error) {
      await shot(page, `failed-${name}`).catch(() => undefined);
      throw new Error(`${name}: ${(error as Error).message.split("\n")[0]}; refused requests: ${JSON.stringify(failedResponses)}; console errors: ${JSON.stringify(consoleErrors)}`);
    }
  };
  /** Waits until the UI is not streaming any more (its Cancel button, shown while it streams, is gone). */
  const waitIdle = async (page: Page, name: string): Promise<void> => {
    try {
      await expect.poll(() => page.getByRole("button", { name: "Cancel", exact: true }).count(), { timeout: PAGE_WAIT_MS }).toBe(0);
    } catch (error) {
      await shot(page, `failed-${name}`).catch(() => undefined);
      throw new Error(`${name}: the UI still streams: ${(error as Error).message.split("\n")[0]}; refused requests: ${JSON.stringify(failedResponses)}`);
    }
  };
  /** Fills `field` with `value` and submits it with Ctrl+Enter, filling again if a re-render reset it first (see startThread). */
  const fillAndSubmit = async (field: ReturnType<Page["locator"]>, value: string): Promise<void> => {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await field.fill(value);
      if ((await field.inputValue()) === value) break;
    }
    await field.press("Control+Enter");
  };
  /** How much of the server's log (stderr) the cases before this one have checked. */
  let logChecked = 0;
  const closePage = async (page: Page): Promise<void> => {
    await page.close();
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
    expect(failedResponses).toEqual([]);
    // nothing went wrong in the server either: no error line in its log since the last case
    // (a duplicate key of a stored event or message included)
    const log = server().stderr();
    const added = log.slice(logChecked);
    logChecked = log.length;
    expect(serverErrors(added)).toEqual([]);
  };

  /** Sends the task in a new thread and waits for the approval form; returns the thread id. */
  const startThread = async (page: Page): Promise<string> => {
    await page.goto(home(), { timeout: 600_000 });
    const box = page.getByPlaceholder("Type your message...");
    await box.waitFor({ timeout: PAGE_WAIT_MS });
    // the thread list in the side bar shows earlier threads under the same first message
    const listedBefore = await page.getByText(target.task, { exact: true }).count();
    await box.fill(target.task);
    await box.press("Enter");
    // the tool call that needed no approval, with its result, then the approval form
    await waitForText(page, target.firstTool, "start");
    try {
      await page.getByRole("button", { name: "Approve" }).waitFor({ timeout: PAGE_WAIT_MS });
    } catch (error) {
      await shot(page, "failed-start-approval").catch(() => undefined);
      throw error;
    }
    // The UI refreshes its thread list 4 s after it created a thread. That re-renders the page,
    // and every render of useStream (SDK 1.15) hands out a new interrupt object, which makes the
    // approval form reset what was typed into it (the UI's own behaviour, with any server):
    // interact only once the new thread is listed (the chat's copy plus the side bar's).
    await expect.poll(() => page.getByText(target.task, { exact: true }).count(), { timeout: PAGE_WAIT_MS }).toBeGreaterThanOrEqual(listedBefore + 2);
    const threadId = new URL(page.url()).searchParams.get("threadId");
    expect(threadId).toMatch(/^[0-9a-f-]{36}$/);
    // the run ended at the approval (LangGraph Platform's model): once its stream has ended and
    // the UI has read the thread again (re-renders that would reset the form), interact
    await waitForThread(page, threadId as string, "interrupted");
    await page.waitForLoadState("networkidle", { timeout: PAGE_WAIT_MS }).catch(() => undefined);
    return threadId as string;
  };

  const expectApprovalForm = async (page: Page): Promise<void> => {
    // the HITL form, not the generic raw-JSON interrupt view
    await expect(page.getByRole("button", { name: "Approve" }).count()).resolves.toBe(1);
    await expect(page.getByRole("button", { name: "Submit rejection" }).count()).resolves.toBe(1);
    await expect(page.getByRole("button", { name: "Mark as Resolved" }).count()).resolves.toBe(1);
    await expect(page.getByText("Human Interrupt").count()).resolves.toBe(0);
    // the arguments are editable fields, one per argument
    const values = await Promise.all((await page.locator("textarea").all()).map((area) => area.inputValue()));
    expect(values).toEqual(expect.arrayContaining(target.approvalArgs));
  };

  const runsOf = async (threadId: string): Promise<DevmindRun[]> => (await api(`/threads/${threadId}/runs`)) as DevmindRun[];
  const threadStatus = async (threadId: string): Promise<string> => ((await api(`/threads/${threadId}`)) as { status: string }).status;
  const stateOf = async (threadId: string): Promise<StateMessage[]> => ((await api(`/threads/${threadId}/state`)) as { values: { messages: StateMessage[] } }).values.messages;
  /** The types of the stored events of a run. */
  const eventsOf = async (runId: string): Promise<{ type: string; decision?: string; by?: string }[]> =>
    (await (await fetch(`${server().url}/runs/${runId}/events?follow=0`, { headers: { "x-api-key": KEY } })).text())
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)) as { type: string; decision?: string; by?: string });
  /** The approval decisions stored for the thread's runs: [decision, by]. */
  const decisionsOf = async (threadId: string): Promise<unknown[][]> => {
    const decided: unknown[][] = [];
    for (const run of (await runsOf(threadId)).reverse()) {
      for (const event of await eventsOf(run.run_id)) if (event.type === "approval.decided") decided.push([event.decision, event.by]);
    }
    return decided;
  };
  /** Waits until the thread is `status` and none of its runs is pending or running. */
  const waitForThread = async (page: Page, threadId: string, status: string): Promise<void> => {
    for (const deadline = Date.now() + PAGE_WAIT_MS; Date.now() < deadline; ) {
      const runs = await runsOf(threadId);
      if ((await threadStatus(threadId)) === status && runs.every((run) => run.status !== "pending" && run.status !== "running")) return;
      await page.waitForTimeout(250);
    }
    throw new Error(`thread ${threadId} did not become ${status}`);
  };

  it("chat with tool calls; approve: the run finishes and the thread reloads; Regenerate answers again on a new branch, no duplicate keys", async () => {
    const page = await openPage();
    const written = contentOf(target.file(dir()));
    const threadId = await startThread(page);
    await expectApprovalForm(page);
    await shot(page, "1-approval");
    expect(await threadStatus(threadId)).toBe("interrupted");

    // reload while it waits: the approval comes back from the thread's state
    await page.reload({ timeout: 600_000 });
    await page.getByRole("button", { name: "Approve" }).waitFor({ timeout: PAGE_WAIT_MS });
    await expectApprovalForm(page);

    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByText(target.finalAnswer).waitFor({ timeout: PAGE_WAIT_MS });
    await page.getByText(`Tool Result: ${target.approvalTool}`).waitFor({ timeout: PAGE_WAIT_MS });
    await waitForThread(page, threadId, "idle");
    expect(contentOf(target.file(dir()))).toBe(target.writes(written, "approved"));
    // decided by the key's principal, audited
    expect(commands).toEqual([{ resume: { decisions: [{ type: "approve" }] } }]);
    expect(await decisionsOf(threadId)).toEqual([["approve", "ui"]]);
    await expect(page.getByRole("button", { name: "Approve" }).count()).resolves.toBe(0);
    // every message once
    await expect(page.getByText(target.task, { exact: true }).count()).resolves.toBeGreaterThanOrEqual(1);
    await expect(page.getByText(target.middleAnswer, { exact: true }).count()).resolves.toBe(1);
    await expect(page.getByText(target.finalAnswer, { exact: true }).count()).resolves.toBe(1);
    await shot(page, "2-approved");

    // reload the finished thread: the whole conversation, no approval
    await page.reload({ timeout: 600_000 });
    await page.getByText(target.finalAnswer).waitFor({ timeout: PAGE_WAIT_MS });
    await expect(page.getByText(target.firstTool).count()).resolves.toBe(1);
    await expect(page.getByText(`Tool Result: ${target.approvalTool}`).count()).resolves.toBe(1);
    await expect(page.getByRole("button", { name: "Approve" }).count()).resolves.toBe(0);
    await shot(page, "3-reloaded");

    // Regenerate the final answer: a run without input from the answer's parent checkpoint; the
    // model answers again on a new branch, which the UI shows with its branch switcher
    const answered = await stateOf(threadId);
    const runsBefore = (await runsOf(threadId)).length;
    const answer = page.getByText(target.finalAnswer, { exact: true });
    await answer.hover();
    await page.getByRole("button", { name: "Refresh" }).last().click();
    await expect.poll(async () => (await runsOf(threadId)).length, { timeout: PAGE_WAIT_MS }).toBe(runsBefore + 1);
    await waitForThread(page, threadId, "idle");
    await page.getByText("2 / 2", { exact: true }).waitFor({ timeout: PAGE_WAIT_MS });
    expect(fromCheckpoint.map((body) => [body.input ?? null, typeof body.checkpoint?.checkpoint_id])).toEqual([[null, "string"]]);
    const regenerated = await stateOf(threadId);
    // the same conversation up to the answer, then a new answer message (the scripted model says the same)
    expect(regenerated.slice(0, -1).map((m) => m.id)).toEqual(answered.slice(0, -1).map((m) => m.id));
    expect([regenerated.at(-1)?.type, regenerated.at(-1)?.content, regenerated.at(-1)?.id === answered.at(-1)?.id]).toEqual(["ai", target.finalAnswer, false]);
    await expect(answer.count()).resolves.toBe(1);
    // the regenerate ran the model only: no tool ran again, nothing waited for approval
    const [regenerateRun] = await runsOf(threadId);
    const types = (await eventsOf(regenerateRun?.run_id as string)).map((event) => event.type);
    expect(types.filter((type) => type.startsWith("tool.") || type.startsWith("approval."))).toEqual([]);
    expect(contentOf(target.file(dir()))).toBe(target.writes(written, "approved"));
    await shot(page, "3b-regenerated");
    // no console error: React's "two children with the same key" included
    await closePage(page);
  });

  it("edit: the tool runs with the edited arguments", async () => {
    const page = await openPage();
    const written = contentOf(target.file(dir()));
    const threadId = await startThread(page);
    const areas = await page.locator("textarea").all();
    const values = await Promise.all(areas.map((area) => area.inputValue()));
    const field = areas[values.indexOf(target.edit.from)];
    expect(field).toBeDefined();
    // an edited form submits an edit instead of an approval; submitted from the field at once
    // (Ctrl+Enter), as a re-render in between would reset the form (see startThread)
    await fillAndSubmit(field as ReturnType<Page["locator"]>, target.edit.to);
    await waitForText(page, target.finalAnswer, "edit");
    await waitForThread(page, threadId, "idle");
    expect(commands.at(-1)).toMatchObject({ resume: { decisions: [{ type: "edit", edited_action: { name: target.approvalTool, args: target.edit.args } }] } });
    expect(await decisionsOf(threadId)).toEqual([["edit", "ui"]]);
    expect(contentOf(target.file(dir()))).toBe(target.writes(written, "edited"));
    await shot(page, "4-edited");
    await closePage(page);
  });

  it("reject with a reason: the tool does not run, the model is told, the run finishes", async () => {
    const page = await openPage();
    const threadId = await startThread(page);
    const before = contentOf(target.file(dir()));
    const reason = page.getByPlaceholder("Share feedback with the agent...");
    // submitted from the field at once (Ctrl+Enter), as a re-render in between would reset the form
    await fillAndSubmit(reason, "not this one");
    await waitForText(page, target.finalAnswer, "reject");
    await waitForThread(page, threadId, "idle");
    await shot(page, "5-rejected");
    expect(commands.at(-1)).toEqual({ resume: { decisions: [{ type: "reject", message: "not this one" }] } });
    expect(await decisionsOf(threadId)).toEqual([["reject", "ui"]]);
    // the file keeps what the earlier threads wrote
    expect(contentOf(target.file(dir()))).toBe(before);
    const tool = (await stateOf(threadId)).filter((m) => m.type === "tool").pop();
    expect(String(tool?.content)).toMatch(target.rejected);
    expect(String(tool?.content)).toContain("not this one");
    await closePage(page);
  });

  it("Mark as Resolved: accepted and run as LangGraph runs command.goto __end__ (the interrupted step asks again); the form still answers it", async () => {
    const page = await openPage();
    const threadId = await startThread(page);
    const before = contentOf(target.file(dir()));
    const waiting = ((await api(`/threads/${threadId}/state`)) as { tasks: { interrupts: { value: unknown }[] }[] }).tasks.flatMap((task) => task.interrupts.map((item) => item.value));
    const paused = async (): Promise<number> => {
      let count = 0;
      for (const run of await runsOf(threadId)) count += (await eventsOf(run.run_id)).filter((event) => event.type === "run.interrupted").length;
      return count;
    };
    expect(await paused()).toBe(1);
    const answered = page.waitForResponse((response) => response.request().method() === "POST" && response.url().endsWith("/runs/stream"), { timeout: PAGE_WAIT_MS });
    await page.getByRole("button", { name: "Mark as Resolved" }).click();
    // accepted, not refused
    expect((await answered).status()).toBe(200);
    expect(commands.at(-1)).toEqual({ goto: "__end__" });
    // a Command without a resume value: the step that interrupted runs again and asks the same
    // question (the official server does the same with this graph); nothing else ran
    await expect.poll(paused, { timeout: PAGE_WAIT_MS }).toBe(2);
    await waitForThread(page, threadId, "interrupted");
    const asked = ((await api(`/threads/${threadId}/state`)) as { tasks: { interrupts: { value: unknown }[] }[] }).tasks.flatMap((task) => task.interrupts.map((item) => item.value));
    expect(asked).toEqual(waiting);
    expect(contentOf(target.file(dir()))).toBe(before);
    await page.getByRole("button", { name: "Approve" }).waitFor({ timeout: PAGE_WAIT_MS });
    await shot(page, "6-resolved");
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByText(target.finalAnswer).waitFor({ timeout: PAGE_WAIT_MS });
    await waitForThread(page, threadId, "idle");
    expect(await decisionsOf(threadId)).toEqual([["approve", "ui"]]);
    await closePage(page);
  });

  it("edit a human message: the run forks before it; the edited message replaces it on a new branch", async () => {
    const page = await openPage();
    const threadId = await startThread(page);
    await page.getByRole("button", { name: "Approve" }).click();
    await waitForText(page, target.finalAnswer, "human-edit-approved");
    await waitForThread(page, threadId, "idle");
    // the stream of the approval ended in the page too (the UI takes no message while it streams)
    await waitIdle(page, "human-edit-approved");
    const box = page.getByPlaceholder("Type your message...");
    await box.fill(FOLLOW_UP);
    await box.press("Enter");
    await waitForText(page, FOLLOW_UP_ANSWER, "human-edit-follow-up");
    await waitForThread(page, threadId, "idle");
    await waitIdle(page, "human-edit-follow-up");
    const before = await stateOf(threadId);
    expect(before.filter((m) => m.type === "human").map((m) => textOf(m.content))).toEqual([target.task, FOLLOW_UP]);

    const sent = fromCheckpoint.length;
    const followUp = page.getByText(FOLLOW_UP, { exact: true });
    await followUp.hover();
    await page.getByRole("button", { name: "Edit" }).last().click();
    const editor = page.locator('textarea:not([placeholder="Type your message..."])');
    await editor.fill(FOLLOW_UP_EDITED);
    await editor.press("Control+Enter");
    await expect.poll(() => fromCheckpoint.length, { timeout: PAGE_WAIT_MS }).toBe(sent + 1);
    await waitForThread(page, threadId, "idle");
    await waitForText(page, FOLLOW_UP_EDITED, "human-edit-edited");
    // the fork starts at the checkpoint before the follow-up: the thread holds the conversation
    // up to it, the edited message in its place (not beside it) and a new answer
    const after = await stateOf(threadId);
    expect(after.filter((m) => m.type === "human").map((m) => textOf(m.content))).toEqual([target.task, FOLLOW_UP_EDITED]);
    const kept = before.slice(0, before.findIndex((m) => textOf(m.content) === FOLLOW_UP));
    expect(after.slice(0, kept.length).map((m) => m.id)).toEqual(kept.map((m) => m.id));
    expect(after.slice(kept.length).map((m) => [m.type, textOf(m.content)])).toEqual([
      ["human", FOLLOW_UP_EDITED],
      ["ai", FOLLOW_UP_ANSWER],
    ]);
    expect(fromCheckpoint.at(-1)).toMatchObject({ input: { messages: [{ type: "human" }] }, checkpoint: { checkpoint_id: expect.any(String) } });
    // the checkpoint the UI forked from is one before the follow-up: it holds the conversation
    // up to it, no more
    const forkedFrom = (await api(`/threads/${threadId}/state/${fromCheckpoint.at(-1)?.checkpoint?.checkpoint_id as string}`)) as { values: { messages: StateMessage[] } };
    expect(forkedFrom.values.messages.map((m) => m.id)).toEqual(kept.map((m) => m.id));
    // the UI shows the branch it made. It finds the sibling branches in the thread's newest 10
    // checkpoints (useStream's history): a model-only run is 4 of createAgent's and 5 of the
    // built-in agent's (input, start, guard, model, guard: the guard ends the run itself), so the
    // original branch stays inside the window and the switcher appears
    await page.getByText("2 / 2", { exact: true }).first().waitFor({ timeout: PAGE_WAIT_MS });
    await shot(page, "7-human-edit");
    await closePage(page);
  });
});
