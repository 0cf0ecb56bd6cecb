/**
 * A configured secret the model streams split across two deltas stays hidden everywhere the live
 * stream goes: `runtime.runs.subscribe` (what the CLI's timeline renders), the CLI timeline's
 * output, and the server's `GET /runs/{id}/events` SSE (deltas reach it over the database's
 * NOTIFY). The model is the real ChatOpenAI against the local OpenAI-compatible test server.
 * Above the runtime seam: PGlite only (the redaction happens before any database is involved).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { Timeline } from "../../src/cli/timeline.js";
import { createRuntime, type LiveEvent } from "../../src/runtime/runtime.js";
import { REDACTED } from "../../src/secret-redaction.js";
import { startServer } from "../../src/server/start-server.js";
import { tempWorkspace } from "../helpers/agent.js";
import { freshMigratedSchema, openBackend } from "../helpers/databases.js";
import { OpenAiTestServer, textReply } from "../helpers/openai-server.js";

// no pattern recognises it: only its configured value can hide it
const MODEL_KEY = "mysecretkey42";
const PARTS = ["Your key is mysecr", "etkey42 and", " nothing else."];

const model = new OpenAiTestServer();
let owner: Database;
beforeAll(async () => {
  await model.start();
  owner = await openBackend("pglite");
});
afterAll(async () => {
  await model.close();
  await owner.close();
});

/** Reads an SSE body as it arrives; `until` resolves once the text read so far satisfies a condition. */
function sseReader(response: Response): { text: () => string; until: (what: string, test: (text: string) => boolean, timeoutMs?: number) => Promise<void>; done: Promise<void> } {
  if (response.body === null) throw new Error("no body");
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const waiters: { test: (text: string) => boolean; resolve: () => void }[] = [];
  const done = (async () => {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) return;
      text += decoder.decode(chunk.value, { stream: true });
      for (const waiter of waiters.splice(0)) if (waiter.test(text)) waiter.resolve();
      else waiters.push(waiter);
    }
  })();
  return {
    text: () => text,
    done,
    until: (what, test, timeoutMs = 30_000) =>
      new Promise<void>((resolve, reject) => {
        if (test(text)) return resolve();
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; read: ${text}`)), timeoutMs);
        waiters.push({ test, resolve: () => (clearTimeout(timer), resolve()) });
      }),
  };
}

describe("live redaction of streamed model text", () => {
  it("hides a configured key split across two deltas in subscribe, the CLI timeline and the events SSE", async () => {
    model.reset();
    model.enqueue(textReply(PARTS));
    const { db, drop } = await freshMigratedSchema(owner);
    const workspace = tempWorkspace();
    const config = loadConfig({ OPENAI_API_KEY: MODEL_KEY, OPENAI_BASE_URL: model.baseUrl, DEVMIND_MODEL_MAX_RETRIES: "0", DEVMIND_WORKSPACE: workspace.dir });
    const runtime = createRuntime({ db, config });
    const server = await startServer({ runtime, config, host: "127.0.0.1", port: 0, workers: 0 });
    try {
      const run = await runtime.runs.create({ input: { messages: ["what is my key?"] } });
      const sse = sseReader(await fetch(`${server.url}/runs/${run.run_id}/events`));
      // the route listens for deltas before it sends the first stored event
      await sse.until("the first stored event", (text) => text.includes("event: run.created"));
      const live: LiveEvent[] = [];
      let printed = "";
      const timeline = new Timeline({ tty: false, verbose: true, write: (text) => void (printed += text) });
      const unsubscribe = runtime.runs.subscribe(run.run_id, (event) => {
        live.push(event);
        timeline.event(event);
      });
      const done = await runtime.runs.execute(run.run_id);
      unsubscribe();
      timeline.stop();
      await sse.until("the end of the stream", (text) => text.includes("event: run.succeeded"));
      await sse.done;

      expect(done.status).toBe("success");
      // the key was really streamed split: no single delta the server sent held it
      expect(PARTS.some((part) => part.includes(MODEL_KEY))).toBe(false);
      const deltas = live.flatMap((event) => (event.type === "model.delta" ? [event] : []));
      const shown = deltas.map((delta) => delta.text).join("");
      expect(shown).toBe(`Your key is ${REDACTED} and nothing else.`);
      // offsets count what was shown before each delta, so consumers checking continuity keep working
      expect(deltas.map((delta) => delta.offset)).toEqual(deltas.map((_, index) => deltas.slice(0, index).reduce((sum, delta) => sum + delta.text.length, 0)));
      // every delta is delivered before the round's model.finished
      const finished = live.findIndex((event) => event.type === "model.finished");
      expect(live.findLastIndex((event) => event.type === "model.delta")).toBeLessThan(finished);
      expect(JSON.stringify(live)).not.toContain(MODEL_KEY);
      expect(printed).toContain(REDACTED);
      expect(printed).not.toContain(MODEL_KEY);
      const sent = sse.text();
      expect(sent).toContain("event: model.delta");
      const sseDeltas = sent
        .split("\n\n")
        .filter((block) => block.startsWith("event: model.delta"))
        .map((block) => (JSON.parse(block.slice(block.indexOf("data: ") + 6).split("\n")[0] as string) as { text: string }).text);
      expect(sseDeltas.join("")).toBe(shown);
      expect(sent).not.toContain(MODEL_KEY);
      expect(sent).not.toContain("mysecr");
    } finally {
      await server.close();
      await runtime.close();
      await drop();
      workspace.cleanup();
    }
  }, 120_000);
});
