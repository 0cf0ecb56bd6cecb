import { Client } from "@langchain/langgraph-sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/types.js";
import { BACKENDS, itOnPrimary, openBackend } from "../helpers/databases.js";
import { startTestServer, TEST_KEYS, type TestServer } from "../helpers/server.js";
import { waitUntil } from "../helpers/waits.js";

const INPUT = { messages: [{ role: "user", content: "summarise the night" }] };

describe.each(BACKENDS)("the SDK's client.crons against devmind serve on %s", (backend) => {
  const servers: TestServer[] = [];
  let owner: Database;
  beforeAll(async () => {
    owner = await openBackend(backend);
  });
  afterAll(async () => {
    await owner.close();
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  const start = async (workers = 0): Promise<{ server: TestServer; client: Client }> => {
    const server = await startTestServer(owner, [], { workers });
    servers.push(server);
    return { server, client: new Client({ apiUrl: server.url, apiKey: TEST_KEYS.alice }) };
  };

  it("creates, searches, counts, updates and deletes crons; a due tick becomes a run of the cron", async () => {
    const { client, server } = await start(1);
    const stateless = await client.crons.create("agent", { schedule: "0 7 * * *", timezone: "Europe/Paris", input: INPUT, metadata: { team: "ops" } });
    expect(stateless).toMatchObject({ assistant_id: "agent", thread_id: null, schedule: "0 7 * * *", timezone: "Europe/Paris", metadata: { team: "ops" }, enabled: true, user_id: null });
    expect(stateless.payload).toEqual({ input: INPUT, multitask_strategy: "reject" });
    // 07:00 in Paris is 05:00 or 06:00 UTC
    expect([5, 6]).toContain(new Date(stateless.next_run_date).getUTCHours());
    const thread = await client.threads.create();
    const onThread = await client.crons.createForThread(thread.thread_id, "agent", { schedule: "*/15 * * * *", input: INPUT, multitaskStrategy: "enqueue" });
    expect(onThread.thread_id).toBe(thread.thread_id);

    expect(await client.crons.count({ assistantId: "agent" })).toBe(2);
    expect(await client.crons.count({ threadId: thread.thread_id })).toBe(1);
    expect(await client.crons.count({ metadata: { team: "ops" } })).toBe(1);
    const all = await client.crons.search({ sortBy: "created_at", sortOrder: "asc" });
    expect(all.map((cron) => cron.cron_id)).toEqual([stateless.cron_id, onThread.cron_id]);
    const page = await client.crons.search({ limit: 1, offset: 1, sortBy: "created_at", sortOrder: "asc", select: ["cron_id", "schedule"] });
    expect(page).toEqual([{ cron_id: onThread.cron_id, schedule: "*/15 * * * *" }]);

    const updated = await client.crons.update(stateless.cron_id, { schedule: "30 8 * * 1-5", enabled: false, metadata: { shift: "day" } });
    expect(updated).toMatchObject({ schedule: "30 8 * * 1-5", enabled: false, metadata: { team: "ops", shift: "day" } });
    expect(await client.crons.search({ enabled: false }).then((crons) => crons.map((cron) => cron.cron_id))).toEqual([stateless.cron_id]);

    // the thread cron's tick comes due (a test clock): the server's worker creates its run
    await server.db.query(`UPDATE "${server.db.schema}".crons SET next_run_at = now() - interval '1 minute' WHERE cron_id = $1::uuid`, [onThread.cron_id]);
    const fired = await waitUntil("the cron's tick", async () => {
      const runs = await client.runs.list(thread.thread_id);
      return runs.length > 0 ? runs : undefined;
    }, 30_000);
    expect(fired).toHaveLength(1);
    const created: unknown[] = [];
    for await (const event of server.runtime.runs.events(fired[0]!.run_id)) if (event.type === "run.created") created.push(event["cron_id"]);
    expect(created).toEqual([onThread.cron_id]);
    expect((await server.runtime.crons.get(onThread.cron_id)).last_run_id).toBe(fired[0]!.run_id);

    await client.crons.delete(stateless.cron_id);
    await client.crons.delete(onThread.cron_id);
    expect(await client.crons.count()).toBe(0);
  });

  itOnPrimary(backend)("refuses bad input with 422 naming it (plain text, as the official server's refusals), unknown options with the validator's 400, unknown assistants, threads and crons with 404", async () => {
    const { server } = await start();
    // a refusal's `message` is the plain-text body; a JSON answer is `body`
    const post = async (path: string, body: unknown, method = "POST") => {
      const response = await fetch(`${server.url}${path}`, { method, headers: { "x-api-key": TEST_KEYS.alice, "content-type": "application/json" }, body: JSON.stringify(body) });
      const text = await response.text();
      const json = (response.headers.get("content-type") ?? "").includes("application/json");
      return { status: response.status, message: json ? "" : text, text, body: (json ? JSON.parse(text) : {}) as Record<string, unknown> };
    };
    const bad = await post("/runs/crons", { assistant_id: "agent", schedule: "* * * * * *", input: INPUT });
    expect(bad.status).toBe(422);
    expect(bad.message).toMatch(/5 fields/);
    const zone = await post("/runs/crons", { assistant_id: "agent", schedule: "* * * * *", timezone: "Nowhere/City", input: INPUT });
    expect(zone.status).toBe(422);
    expect(zone.message).toMatch(/timezone/);
    const end = await post("/runs/crons", { assistant_id: "agent", schedule: "* * * * *", end_time: "someday", input: INPUT });
    expect(end.message).toMatch(/end_time/);
    const unknown = await post("/runs/crons", { assistant_id: "agent", schedule: "* * * * *", input: INPUT, stream_mode: "values", interrupt_before: ["a"] });
    // options the cron schema does not have: the official validator's 400, its zod issues naming them
    expect(unknown).toMatchObject({ status: 400, body: { success: false, error: { name: "ZodError" } } });
    expect(unknown.text).toMatch(/stream_mode/);
    expect(unknown.text).toMatch(/interrupt_before/);
    // a webhook outside the allow-list (default loopback only), and "delete" on a thread's cron, are refused
    const private_ = await post("/runs/crons", { assistant_id: "agent", schedule: "* * * * *", input: INPUT, webhook: "http://10.0.0.7/hook" });
    expect(private_.status).toBe(422);
    expect(private_.message).toMatch(/webhook target "10.0.0.7" is not allowed/);
    // a loopback webhook and on_run_completed "delete" on a stateless cron are accepted and shown
    const deleting = await post("/runs/crons", { assistant_id: "agent", schedule: "* * * * *", input: INPUT, on_run_completed: "delete", webhook: "http://127.0.0.1:9/hook" });
    expect(deleting.status).toBe(200);
    expect(deleting.body).toMatchObject({ on_run_completed: "delete", payload: { webhook: "http://127.0.0.1:9/hook", on_run_completed: "delete" } });
    const deletingId = (deleting.body as unknown as { cron_id: string }).cron_id;
    expect((await post(`/runs/crons/${deletingId}`, { webhook: null, on_run_completed: "keep" }, "PATCH")).body).toMatchObject({ on_run_completed: "keep", payload: { on_run_completed: "keep" } });
    await server.runtime.crons.delete(deletingId);
    expect((await post("/runs/crons", { assistant_id: "nope", schedule: "* * * * *", input: INPUT })).status).toBe(404);
    expect((await post("/threads/00000000-0000-0000-0000-000000000000/runs/crons", { assistant_id: "agent", schedule: "* * * * *", input: INPUT })).status).toBe(404);
    expect((await post("/runs/crons/00000000-0000-0000-0000-000000000000", { enabled: false }, "PATCH")).status).toBe(404);
    // a body the search schema refuses: the official validator's 400 with the zod issues
    expect(await post("/runs/crons/search", { limit: 5, webhook: 1 })).toMatchObject({ status: 400, body: { success: false, error: { name: "ZodError" } } });
    const created = await post("/runs/crons", { assistant_id: "agent", schedule: "* * * * *", input: INPUT });
    const patched = await post(`/runs/crons/${(created.body as unknown as { cron_id: string }).cron_id}`, { stream_mode: "values" }, "PATCH");
    expect(patched).toMatchObject({ status: 400, body: { success: false, error: { name: "ZodError" } } });
    expect(patched.text).toMatch(/stream_mode/);
  });
});
