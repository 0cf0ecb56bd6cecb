/**
 * Tenant isolation fuzz: with the project's auth handler (test/fixtures/auth), bob sends thousands
 * of requests naming alice's threads, runs, checkpoints, assistants, crons and store items on
 * every route of the API (LangGraph's and devmind's, streams and joins included), in a seeded
 * random order. Not one answer may carry a byte of alice's data: none of her secret values, and
 * none of her ids but the one bob himself sent; a route naming one of her resources is never a
 * 2xx; and afterwards every resource of hers is as it was.
 */
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/types.js";
import type { GraphEntry } from "../../src/graphs/graph-kinds.js";
import { loadCustomAuth } from "../../src/server/custom-auth/load-auth.js";
import { openBackend, PRIMARY_ENGINE } from "../helpers/databases.js";
import { Rng } from "../helpers/fuzz.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/auth/", import.meta.url));
/** Requests the fuzz sends (docs/auth.md quotes this figure). */
const REQUESTS = 3_000;
const SEED = 27;

/** One hostile request: which of alice's resources it names, and whether it only lists (200 allowed). */
interface Probe {
  method: string;
  path: string;
  body?: unknown;
  /** A list or count: 200 is fine, as long as nothing of alice's is in it. */
  listing?: boolean;
}

describe(`tenant isolation fuzz (${PRIMARY_ENGINE})`, () => {
  let owner: Database;
  let server: TestServer;
  const secrets: string[] = [];
  const ids: string[] = [];
  let snapshot: () => Promise<string>;
  let before = "";
  const res = {
    threads: [] as string[],
    runs: [] as { thread: string; run: string }[],
    checkpoints: [] as string[],
    assistant: "",
    crons: [] as string[],
  };

  beforeAll(async () => {
    owner = await openBackend(PRIMARY_ENGINE);
    const { graph } = (await import(`${FIXTURES}graph.ts`)) as { graph: GraphEntry };
    const auth = await loadCustomAuth({ source: "./auth.ts:auth", file: `${FIXTURES}auth.ts`, exportName: "auth" });
    server = await startTestServer(owner, [], { workers: 1, apiKeys: "", graphs: { agent: false, notes: graph }, auth });
    const alice = new Client({ apiUrl: server.url, defaultHeaders: { Authorization: "Bearer tok-alice" } });
    const secret = (label: string): string => {
      const value = `ALICE-SECRET-${label}-${crypto.randomUUID()}`;
      secrets.push(value);
      return value;
    };
    for (let index = 0; index < 3; index += 1) {
      const thread = await alice.threads.create({ metadata: { topic: secret("topic") } });
      res.threads.push(thread.thread_id);
      await alice.runs.wait(thread.thread_id, "notes", { input: { note: secret("note") } });
      const run = await alice.runs.create(thread.thread_id, "notes", { input: { note: index === 2 ? "ask" : secret("note") }, metadata: { tag: secret("run") } });
      await alice.runs.join(thread.thread_id, run.run_id);
      res.runs.push({ thread: thread.thread_id, run: run.run_id });
      for (const state of await alice.threads.getHistory(thread.thread_id, { limit: 3 })) if (state.checkpoint.checkpoint_id) res.checkpoints.push(state.checkpoint.checkpoint_id);
    }
    res.assistant = (await alice.assistants.create({ graphId: "notes", name: secret("assistant"), metadata: { secret: secret("assistant-md") } })).assistant_id;
    res.crons.push((await alice.crons.create("notes", { schedule: "0 7 * * *", input: { note: secret("cron") }, metadata: { label: secret("cron-md") } })).cron_id);
    res.crons.push((await alice.crons.createForThread(res.threads[0]!, "notes", { schedule: "0 8 * * *", input: { note: secret("cron2") } })).cron_id);
    await alice.store.putItem(["alice", "notes"], "k1", { text: secret("store") });
    ids.push(...res.threads, ...res.runs.map((run) => run.run), ...res.checkpoints, res.assistant, ...res.crons);
    // everything of alice's as she sees it, to compare after the fuzz
    snapshot = async () =>
      JSON.stringify({
        threads: await Promise.all(res.threads.map(async (id) => ({ thread: await alice.threads.get(id), state: (await alice.threads.getState(id)).values, runs: (await alice.runs.list(id)).map((run) => [run.run_id, run.status, run.metadata]) }))),
        assistant: await alice.assistants.get(res.assistant),
        // without `now` (the server's clock at the answer)
        crons: (await alice.crons.search({ limit: 100, sortBy: "cron_id" })).map((cron) => ({ ...cron, now: null })),
        store: await alice.store.searchItems(["alice"], { limit: 100 }),
      });
    before = await snapshot();
  }, 180_000);
  afterAll(async () => {
    await server?.close();
    await owner?.close();
  });

  /** Every route × alice's resources, as bob would try them. */
  const probe = (rng: Rng): Probe => {
    const pick = <T>(items: readonly T[]): T => items[rng.int(0, items.length - 1)]!;
    const t = pick(res.threads);
    const { thread: rt, run: r } = pick(res.runs);
    const cp = pick(res.checkpoints);
    const a = res.assistant;
    const c = pick(res.crons);
    const probes: Probe[] = [
      { method: "GET", path: `/threads/${t}` },
      { method: "PATCH", path: `/threads/${t}`, body: { metadata: { owner: "bob", hijacked: true } } },
      { method: "DELETE", path: `/threads/${t}` },
      { method: "GET", path: `/threads/${t}/state` },
      { method: "GET", path: `/threads/${t}/state/${cp}` },
      { method: "POST", path: `/threads/${t}/state/checkpoint`, body: { checkpoint: { checkpoint_id: cp } } },
      { method: "POST", path: `/threads/${t}/state`, body: { values: { note: "bob was here" } } },
      { method: "PATCH", path: `/threads/${t}/state`, body: { metadata: { bob: 1 } } },
      { method: "POST", path: `/threads/${t}/history`, body: { limit: 10 } },
      { method: "GET", path: `/threads/${t}/history?limit=10` },
      { method: "POST", path: `/threads/${t}/copy` },
      { method: "POST", path: "/threads/search", body: { ids: [t], limit: 100 }, listing: true },
      { method: "POST", path: "/threads/search", body: { metadata: { owner: "alice" }, limit: 100 }, listing: true },
      { method: "POST", path: "/threads/count", body: { metadata: { owner: "alice" } }, listing: true },
      { method: "POST", path: "/threads/prune", body: { thread_ids: [t] }, listing: true },
      { method: "POST", path: "/threads", body: { thread_id: t, if_exists: "do_nothing" } },
      { method: "GET", path: `/threads/${t}/runs` },
      { method: "GET", path: `/threads/${rt}/runs/${r}` },
      { method: "GET", path: `/threads/${rt}/runs/${r}/join` },
      { method: "GET", path: `/threads/${rt}/runs/${r}/stream` },
      { method: "POST", path: `/threads/${rt}/runs/${r}/cancel` },
      { method: "DELETE", path: `/threads/${rt}/runs/${r}` },
      { method: "POST", path: `/threads/${t}/runs`, body: { assistant_id: "notes", input: { note: "bob" } } },
      { method: "POST", path: `/threads/${t}/runs`, body: { assistant_id: "notes", input: { note: "bob" }, if_not_exists: "create" } },
      { method: "POST", path: `/threads/${t}/runs/wait`, body: { assistant_id: "notes", command: { resume: "bob says yes" } } },
      { method: "POST", path: `/threads/${t}/runs/stream`, body: { assistant_id: "notes", input: { note: "bob" } } },
      { method: "GET", path: `/threads/${t}/stream` },
      { method: "GET", path: `/runs/${r}` },
      { method: "GET", path: `/runs/${r}/events?follow=0` },
      { method: "GET", path: `/runs/${r}/events` },
      { method: "GET", path: `/runs/${r}/stream` },
      { method: "POST", path: `/runs/${r}/cancel` },
      { method: "POST", path: `/runs/${r}/decisions`, body: { decisions: [{ type: "approve" }] } },
      { method: "POST", path: "/runs/cancel", body: { run_ids: [r] } },
      { method: "GET", path: "/runs?limit=500", listing: true },
      { method: "GET", path: "/approvals", listing: true },
      { method: "GET", path: `/files/${r}` },
      { method: "GET", path: `/assistants/${a}` },
      { method: "PATCH", path: `/assistants/${a}`, body: { metadata: { owner: "bob" } } },
      { method: "DELETE", path: `/assistants/${a}` },
      { method: "POST", path: `/assistants/${a}/versions`, body: {} },
      { method: "POST", path: `/assistants/${a}/latest`, body: { version: 1 } },
      { method: "GET", path: `/assistants/${a}/graph` },
      { method: "GET", path: `/assistants/${a}/schemas` },
      { method: "GET", path: `/assistants/${a}/subgraphs` },
      { method: "POST", path: "/assistants", body: { graph_id: "notes", assistant_id: a, if_exists: "do_nothing" } },
      { method: "POST", path: "/assistants/search", body: { metadata: { owner: "alice" }, limit: 100 }, listing: true },
      { method: "POST", path: "/assistants/count", body: {}, listing: true },
      { method: "GET", path: `/runs/crons/${c}` },
      { method: "PATCH", path: `/runs/crons/${c}`, body: { schedule: "0 9 * * *" } },
      { method: "DELETE", path: `/runs/crons/${c}` },
      { method: "POST", path: "/runs/crons/search", body: { thread_id: t, limit: 100 }, listing: true },
      { method: "POST", path: "/runs/crons/count", body: {}, listing: true },
      { method: "POST", path: `/threads/${t}/runs/crons`, body: { assistant_id: "notes", schedule: "0 7 * * *", input: { note: "bob" } } },
      { method: "GET", path: "/store/items?namespace=alice.notes&key=k1" },
      { method: "PUT", path: "/store/items", body: { namespace: ["alice", "notes"], key: "k1", value: { text: "bob" } } },
      { method: "DELETE", path: "/store/items", body: { namespace: ["alice", "notes"], key: "k1" } },
      { method: "POST", path: "/store/items/search", body: { namespace_prefix: ["alice"] } },
      { method: "POST", path: "/store/items/search", body: { namespace_prefix: [], limit: 100 }, listing: true },
      { method: "POST", path: "/store/namespaces", body: {}, listing: true },
      { method: "POST", path: "/store/namespaces", body: { prefix: ["alice"] } },
    ];
    return pick(probes);
  };

  it(`${REQUESTS} requests as bob naming alice's resources: 0 leaks, 0 changes`, async () => {
    const rng = new Rng(SEED);
    const statuses = new Map<number, number>();
    const leaks: string[] = [];
    for (let sent = 0; sent < REQUESTS; sent += 1) {
      const { method, path, body, listing } = probe(rng);
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: "Bearer tok-bob", ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await response.text();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      const sentText = `${path} ${JSON.stringify(body ?? null)}`;
      const leaked = [...secrets, ...ids.filter((id) => !sentText.includes(id))].filter((value) => text.includes(value));
      if (leaked.length > 0) leaks.push(`${method} ${path} -> ${response.status}: ${leaked.join(", ")}`);
      // a join of another user's run stream opens and sends one `error` part, as the official server does: a refusal, not a 2xx of her data
      const refusedStream = method === "GET" && /\/stream$/.test(path.split("?")[0] as string) && response.status === 200 && isRefusalStream(text);
      if (!listing && response.status < 300 && !refusedStream) leaks.push(`${method} ${path} -> ${response.status} (a 2xx on another user's resource)`);
      if (response.status >= 500) leaks.push(`${method} ${path} -> ${response.status}: ${text.slice(0, 200)}`);
    }
    console.log(`auth fuzz: ${REQUESTS} requests, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}, ${leaks.length} leaks`);
    expect(leaks).toEqual([]);
    expect(await snapshot()).toBe(before);
  }, 600_000);
});

/** An SSE body that is exactly one `error` part saying 404 (how another user's join stream is refused). */
function isRefusalStream(body: string): boolean {
  const parts = body.split(/\n\n/).map((part) => part.trim()).filter((part) => part !== "" && !part.startsWith(":"));
  if (parts.length !== 1) return false;
  const lines = (parts[0] as string).split("\n");
  const event = lines.find((line) => line.startsWith("event:"))?.slice(6).trim();
  const data = lines.find((line) => line.startsWith("data:"))?.slice(5).trim() ?? "";
  return event === "error" && /^\{"error":"Error","message":"404: (Run|Thread) not found"\}$/.test(data);
}
