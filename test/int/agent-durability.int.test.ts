import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mapStoredMessagesToChatMessages } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/open-database.js";
import type { Database } from "../../src/db/types.js";
import type { AgentCrashOptions } from "../fixtures/agent-crash.js";
import { pairing, shape } from "../helpers/agent.js";
import { killLiveChildren, spawnFixture } from "../helpers/child-process.js";
import { BACKENDS, TEST_DATABASE_URL, dropSchema, freshSchemaName } from "../helpers/databases.js";
import { seedDataDir } from "../helpers/pglite-template.js";

const FIXTURE = "test/fixtures/agent-crash.ts";
const dirs: string[] = [];
afterEach(async () => {
  await killLiveChildren();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.each(BACKENDS)("agent durability on %s", (backend) => {
  it("a run SIGKILLed between two calls of one step resumes elsewhere without re-running the finished call", async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), "devmind-crash-")));
    dirs.push(root);
    const workspace = join(root, "ws");
    (await import("node:fs")).mkdirSync(workspace);
    const schema = freshSchemaName("crash");
    const options: AgentCrashOptions = {
      ...(backend === "postgres" ? { url: TEST_DATABASE_URL } : { dataDir: seedDataDir(join(root, "data")) }),
      schema,
      threadId: "crash-thread",
      workspace,
    };
    const first = spawnFixture(FIXTURE, ["run", JSON.stringify(options)], 60_000);
    // the fast call's line is on disk and the slow call is in flight
    await until("the slow call to start", () => existsSync(join(workspace, "slow-started")), 45_000);
    await until("the fast call's line", () => existsSync(join(workspace, "log.txt")) && readFileSync(join(workspace, "log.txt"), "utf8").includes("fast"), 10_000);
    // give LangGraph time to save the fast task's writes (they are saved when the task ends)
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    first.process.kill("SIGKILL");
    const killed = await first.exited;
    expect(killed.signal).toBe("SIGKILL");

    writeFileSync(join(workspace, "release"), "go");
    const second = spawnFixture(FIXTURE, ["resume", JSON.stringify(options)], 60_000);
    const done = await second.exited;
    expect(done.stderr).toBe("");
    expect(done.code).toBe(0);
    const result = JSON.parse(done.stdout.trim().split("\n").pop() ?? "{}") as { pid: number; stop_reason: string; answer: string; messages: never[] };
    expect(result.pid).not.toBe(first.pid);
    expect(result.stop_reason).toBe("completed");
    expect(result.answer).toBe("both lines written");
    const messages = mapStoredMessagesToChatMessages(result.messages);
    expect(shape(messages)).toEqual(["human", "ai", "tool", "tool", "ai"]);
    const pairs = pairing(messages);
    expect(pairs.map((p) => p.id).sort()).toEqual(["fast", "slow"]);
    expect(pairs.every((p) => p.envelope.ok)).toBe(true);
    // the finished call ran once; the in-flight one ran to completion in the second process
    const lines = readFileSync(join(workspace, "log.txt"), "utf8").trim().split("\n");
    expect(lines.filter((l) => l === "fast")).toHaveLength(1);
    expect(lines.filter((l) => l === "slow")).toHaveLength(1);

    if (backend === "postgres") {
      const db: Database = await openDatabase({ url: TEST_DATABASE_URL, schema });
      await dropSchema(db, schema);
      await db.close();
    }
  }, 120_000);
});
