import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/types.js";
import { AttachmentStore } from "../../src/runtime/attachments/attachment-store.js";
import { defaultWebAssetsDir, WEB_ASSET_FILES } from "../../src/server/web/web-assets.js";
import { BACKENDS, itOnPrimary, openBackend } from "../helpers/databases.js";
import { deepJson, hostileIds, randomUuid, rawRequest, Rng, runAll, snapshotTables, type RawRequest, type RawResponse } from "../helpers/fuzz.js";
import { startServerStack, type ServerStack } from "../helpers/server-stack.js";

// Hostile input against every route of the HTTP API (CONTRACT section 8): generated from a fixed
// seed, so every run sends the same requests. For each route a batch of requests that must be
// refused (bad ids, bad bodies, oversized bodies, wrong methods) — each answered 4xx with
// {"error", "message"}, and the database unchanged afterwards (every table's rows digested) — then
// a batch of odd-but-maybe-acceptable requests (strange queries, deep nesting inside valid
// bodies) that must only never be a 5xx. The server must stay up throughout.

const SEED = 0x5eed_0606;
const CONCURRENCY = 8;
/** Refused requests generated per route that takes ids or a body. */
const STRICT_PER_ROUTE = 200;
/** Thousands of requests per batch: generous on a loaded two-core machine (no timing is asserted). */
const HEAVY_TEST_MS = 240_000;
const BODY_LIMIT = 1_048_576;

/** A route of the API, with the real ids its parameters take when the id is not the thing attacked. */
interface RouteSpec {
  method: string;
  template: string;
  /** A body the route accepts (when it has one); attacked field by field. */
  valid?: Record<string, unknown>;
  /** Values per top-level field the route must refuse (any of them makes the body invalid). */
  badFields?: Record<string, unknown[]>;
  /** Query parameters to attack in the tolerant batch. */
  query?: string[];
  /** Never send this route a body it would accept with its real ids (it would change state). */
  mutating: boolean;
  /** Path parameters that must not be given real ids even with a bad body (e.g. DELETE). */
  neverReal?: boolean;
}

const NOT_OBJECT = ["x", 1, true, [], [{}]];
const NOT_STRING = [1, true, [], {}, { a: 1 }];
/** Store namespaces the API refuses: not label lists, empty labels, dots, NUL, too many or too long labels. */
const BAD_NAMESPACE = ["x", 1, {}, [1], [""], ["a", ""], ["a.b"], ["a\u0000"], Array.from({ length: 65 }, () => "n"), ["x".repeat(1025)]];
const BAD_NAMESPACE_REQUIRED = [...BAD_NAMESPACE, [], ["a:b"]];

function routes(ids: SetupIds): { spec: RouteSpec; params: Record<string, string> }[] {
  const runBody = { assistant_id: "agent", input: { messages: [{ role: "user", content: "hi" }] } };
  const runBad: Record<string, unknown[]> = {
    assistant_id: [...NOT_STRING, "", "x".repeat(300)],
    input: [
      ...NOT_OBJECT,
      { messages: [] },
      { messages: "hi" },
      { messages: {} },
      { messages: Array.from({ length: 1001 }, () => "x") },
      { messages: [5] },
      { messages: [null] },
      { messages: [{ role: "bogus", content: "x" }] },
      { messages: [{ role: "user", content: "a\u0000b" }] },
      { messages: [{ role: "user", content: 5 }] },
    ],
    stream_mode: ["bogus", 1, ["values", "bogus"], {}],
    multitask_strategy: ["bogus", 1, "ROLLBACK"],
    if_not_exists: ["bogus", 1, true],
    on_disconnect: ["bogus", 1],
    limits: ["x", 1, [], { maxModelRounds: "x" }, { maxModelRounds: {} }, { maxModelRounds: 0 }, { maxModelRounds: 1.5 }, { bogus: 1 }],
    metadata: ["x", 1, [], true],
    config: ["x", 1, []],
    command: ["x", 1, [], { update: { a: 1 } }, { goto: "x" }],
    stream_resumable: ["x", 1, {}],
  };
  const threadRunParams = { tid: ids.threadIdle };
  const list: { spec: RouteSpec; params: Record<string, string> }[] = [
    { spec: { method: "GET", template: "/ok", mutating: false }, params: {} },
    { spec: { method: "GET", template: "/info", mutating: false }, params: {} },
    { spec: { method: "GET", template: "/health", mutating: false }, params: {} },
    { spec: { method: "GET", template: "/", mutating: false }, params: {} },
    { spec: { method: "GET", template: "/assets/{asset}", mutating: false }, params: { asset: "app.js" } },
    { spec: { method: "GET", template: "/assistants/{aid}", mutating: false }, params: { aid: "agent" } },
    {
      spec: { method: "POST", template: "/assistants/search", valid: {}, badFields: { graph_id: NOT_STRING, metadata: NOT_OBJECT, limit: ["x", 0, -1, 1.5, 10_000], offset: ["x", -1, 1.5] }, mutating: false },
      params: {},
    },
    {
      spec: {
        method: "POST",
        template: "/threads",
        valid: {},
        badFields: { thread_id: [...NOT_STRING, "", "x".repeat(300)], metadata: NOT_OBJECT, if_exists: ["bogus", 1, true], supersteps: [[{ updates: [] }]] },
        mutating: true,
      },
      params: {},
    },
    {
      spec: {
        method: "POST",
        template: "/threads/search",
        valid: {},
        badFields: { metadata: NOT_OBJECT, ids: ["x", [1], [""], {}], status: ["bogus", 1], limit: ["x", 0, -1, 1.5, 10_000], offset: ["x", -1], sort_by: ["bogus", 1], sort_order: ["sideways", 1] },
        mutating: false,
      },
      params: {},
    },
    { spec: { method: "GET", template: "/threads/{tid}", mutating: false }, params: { tid: ids.threadDone } },
    { spec: { method: "PATCH", template: "/threads/{tid}", valid: { metadata: { a: 1 } }, badFields: { metadata: NOT_OBJECT }, mutating: true }, params: { tid: ids.threadIdle } },
    { spec: { method: "DELETE", template: "/threads/{tid}", mutating: true, neverReal: true }, params: { tid: ids.threadIdle } },
    { spec: { method: "GET", template: "/threads/{tid}/state", mutating: false }, params: { tid: ids.threadDone } },
    { spec: { method: "GET", template: "/threads/{tid}/state/{cid}", mutating: false }, params: { tid: ids.threadDone, cid: ids.checkpointDone } },
    {
      spec: { method: "POST", template: "/threads/{tid}/history", valid: {}, badFields: { limit: ["x", 0, -1, 1.5, 100_000], before: [1, true, [], "", { configurable: {} }, { configurable: { checkpoint_id: 1 } }, "a\u0000b", "x".repeat(300)] }, mutating: false },
      params: { tid: ids.threadDone },
    },
    { spec: { method: "POST", template: "/threads/{tid}/runs", valid: runBody, badFields: runBad, mutating: true }, params: threadRunParams },
    { spec: { method: "POST", template: "/threads/{tid}/runs/stream", valid: runBody, badFields: runBad, mutating: true }, params: threadRunParams },
    { spec: { method: "POST", template: "/threads/{tid}/runs/wait", valid: runBody, badFields: runBad, mutating: true }, params: threadRunParams },
    { spec: { method: "POST", template: "/runs", valid: runBody, badFields: runBad, mutating: true }, params: {} },
    { spec: { method: "POST", template: "/runs/stream", valid: runBody, badFields: runBad, mutating: true }, params: {} },
    { spec: { method: "POST", template: "/runs/wait", valid: runBody, badFields: runBad, mutating: true }, params: {} },
    { spec: { method: "GET", template: "/threads/{tid}/runs", query: ["limit", "offset", "status"], mutating: false }, params: { tid: ids.threadDone } },
    { spec: { method: "GET", template: "/threads/{tid}/runs/{rid}", mutating: false }, params: { tid: ids.threadDone, rid: ids.runDone } },
    { spec: { method: "POST", template: "/threads/{tid}/runs/{rid}/cancel", mutating: true, neverReal: true }, params: { tid: ids.threadWaiting, rid: ids.runWaiting } },
    { spec: { method: "GET", template: "/threads/{tid}/runs/{rid}/join", mutating: false }, params: { tid: ids.threadDone, rid: ids.runDone } },
    { spec: { method: "GET", template: "/threads/{tid}/runs/{rid}/stream", query: ["stream_mode"], mutating: false }, params: { tid: ids.threadDone, rid: ids.runDone } },
    { spec: { method: "GET", template: "/runs/{rid}/stream", query: ["stream_mode"], mutating: false }, params: { rid: ids.runDone } },
    { spec: { method: "GET", template: "/runs", query: ["status", "limit", "before"], mutating: false }, params: {} },
    { spec: { method: "GET", template: "/runs/{rid}", mutating: false }, params: { rid: ids.runDone } },
    { spec: { method: "GET", template: "/runs/{rid}/events", query: ["after", "follow"], mutating: false }, params: { rid: ids.runDone } },
    {
      spec: {
        method: "POST",
        template: "/runs/{rid}/decisions",
        valid: { decisions: [{ type: "approve" }] },
        badFields: {
          decisions: [
            ...NOT_OBJECT,
            [],
            [1],
            ["approve"],
            [{ type: "bogus" }],
            [{}],
            [{ type: "approve" }, { type: "approve" }],
            [{ type: "approve", tool_call_id: "call_nope" }],
            [{ type: "approve", tool_call_id: 5 }],
            [{ type: "edit" }],
            [{ type: "edit", editedAction: { name: "write_file", args: "x" } }],
            [{ type: "edit", editedAction: { name: "write_file", args: [] } }],
            [{ type: "edit", editedAction: { name: "write_file", args: { path: 5 } } }],
            [{ type: "edit", editedAction: { name: "write_file", args: { path: "../outside.txt", content: "x" } } }],
            Array.from({ length: 1001 }, () => ({ type: "approve" })),
          ],
          reason: [1, true, {}, "x".repeat(5000)],
        },
        mutating: true,
      },
      params: { rid: ids.runWaiting },
    },
    { spec: { method: "POST", template: "/runs/{rid}/cancel", mutating: true, neverReal: true }, params: { rid: ids.runWaiting } },
    { spec: { method: "GET", template: "/approvals", query: ["status", "limit"], mutating: false }, params: {} },
    { spec: { method: "GET", template: "/files/{fid}", mutating: false }, params: { fid: ids.file } },
    {
      spec: { method: "PUT", template: "/store/items", valid: { namespace: ["h"], key: "k", value: { a: 1 } }, badFields: { namespace: BAD_NAMESPACE_REQUIRED, key: [...NOT_STRING, "", "k\u0000", "x".repeat(2000)], value: [...NOT_OBJECT, null, { t: "a\u0000b" }], ttl: ["x", 0, -1, {}], index: ["x", true, 1, [1]] }, mutating: true },
      params: {},
    },
    { spec: { method: "GET", template: "/store/items", query: ["namespace", "key", "refresh_ttl"], mutating: false }, params: {} },
    { spec: { method: "DELETE", template: "/store/items", valid: { namespace: ["h"], key: "k" }, badFields: { namespace: BAD_NAMESPACE_REQUIRED, key: [...NOT_STRING, "", "x".repeat(2000)] }, mutating: true }, params: {} },
    {
      spec: { method: "POST", template: "/store/items/search", valid: { namespace_prefix: [] }, badFields: { namespace_prefix: BAD_NAMESPACE, filter: ["x", 1, []], limit: ["x", -1, 1.5, 100_000], offset: ["x", -1, 1.5], query: [1, {}, "x".repeat(20_000)], refresh_ttl: ["x", 1] }, mutating: false },
      params: {},
    },
    {
      spec: { method: "POST", template: "/store/namespaces", valid: {}, badFields: { prefix: BAD_NAMESPACE, suffix: BAD_NAMESPACE, max_depth: ["x", 0, -1, 1.5, 1_000], limit: ["x", -1, 1.5, 100_000], offset: ["x", -1, 1.5] }, mutating: false },
      params: {},
    },
  ];
  return list;
}

/** Ids of the state the suite attacks around. */
interface SetupIds {
  threadDone: string;
  runDone: string;
  checkpointDone: string;
  threadWaiting: string;
  runWaiting: string;
  threadIdle: string;
  file: string;
}

function fill(template: string, params: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`no value for {${name}} in ${template}`);
    return value;
  });
}

const NON_JSON = ["{", '{"a":', "'single'", "NaN", "undefined", "{a:1}", "[1,]", '{"a":1}}', "\u0000", "<xml/>", "a=1&b=2", "--boundary\r\n", '{"a":"\\ud800"', "\ufeff{", "{}\u0000"];

/** Bodies no route with a JSON body accepts, whatever the content type says. */
function badBodies(rng: Rng, spec: RouteSpec): { body: Buffer | string; headers: Record<string, string> }[] {
  const json = { "content-type": "application/json" };
  const out: { body: Buffer | string; headers: Record<string, string> }[] = [];
  for (const text of NON_JSON) out.push({ body: text, headers: json });
  for (let i = 0; i < 12; i += 1) {
    // random bytes, never only whitespace (an empty body means {})
    out.push({ body: Buffer.concat([Buffer.from([0xff]), rng.bytes(rng.int(1, 2048))]), headers: rng.pick([json, { "content-type": "application/octet-stream" }, {}]) });
  }
  for (const scalar of ["[]", "[1,2,3]", '"string"', "1", "-1.5e308", "true", "null", deepJson(10_000, "array"), deepJson(200_000, "array")]) out.push({ body: scalar, headers: json });
  for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=utf-16", "image/png", "application/json\u0000"]) {
    out.push({ body: "{not json", headers: { "content-type": type.replace("\u0000", "") } });
  }
  out.push({ body: Buffer.from("{not json", "utf16le"), headers: { "content-type": "application/json; charset=utf-16" } });
  // over the body limit: declared and streamed
  out.push({ body: `{"metadata":{"x":"${"a".repeat(BODY_LIMIT + 10)}"}}`, headers: json });
  out.push({ body: `[${"1,".repeat(BODY_LIMIT)}1]`, headers: { ...json, "x-chunked": "1" } });
  if (spec.valid !== undefined && spec.badFields !== undefined) {
    for (const [field, values] of Object.entries(spec.badFields)) {
      for (const value of values) {
        let text = JSON.stringify({ ...spec.valid, [field]: value });
        // extra fields ride along (prototype-polluting keys, random names): they must not make a bad body acceptable
        if (rng.bool(0.3)) text = `{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},${JSON.stringify(rng.text(8))}:${JSON.stringify(rng.text(16))},${text.slice(1)}`;
        out.push({ body: text, headers: json });
      }
    }
  }
  return out;
}

/** Requests to `spec` that must all be refused with a 4xx. */
function strictRequests(rng: Rng, spec: RouteSpec, params: Record<string, string>): RawRequest[] {
  const out: RawRequest[] = [];
  const names = Object.keys(params);
  const validBody = spec.valid === undefined ? undefined : JSON.stringify(spec.valid);
  const withBody = (req: RawRequest): RawRequest => (validBody === undefined ? req : { ...req, body: validBody, headers: { ...req.headers, "content-type": "application/json" } });
  // bad ids in each position (the other parameters real), with a body the route would accept
  for (const name of names) {
    for (const id of hostileIds(rng)) {
      if (spec.template === "/assistants/{aid}" && id === "agent") continue;
      out.push(withBody({ method: spec.method, path: fill(spec.template, { ...params, [name]: id }) }));
      out.push(withBody({ method: spec.method, path: `${fill(spec.template, { ...params, [name]: id })}?${rng.pick(["a=1", "limit=-1", "x=%00", "__proto__[x]=1"])}`, headers: { "x-request-id": rng.text(4).replace(/[^\x21-\x7e]/g, "x") } }));
    }
    // a well-formed uuid that names nothing
    out.push(withBody({ method: spec.method, path: fill(spec.template, { ...params, [name]: randomUuid(rng) }) }));
  }
  // bodies the route must refuse, sent to the real ids
  if (spec.valid !== undefined && spec.neverReal !== true) {
    for (const { body, headers } of badBodies(rng, spec)) out.push({ method: spec.method, path: fill(spec.template, params), body, headers });
  }
  // methods no route has, on the real path
  for (const method of ["PUT", "PROPFIND", "MKCOL"]) out.push({ method, path: fill(spec.template, params) });
  // more of the same kinds, generated, up to STRICT_PER_ROUTE: random ids, random bad bodies
  const bodyRoute = spec.valid !== undefined && spec.badFields !== undefined && spec.neverReal !== true;
  if (names.length === 0 && !bodyRoute) return out;
  while (out.length < STRICT_PER_ROUTE) {
    if (names.length > 0 && (!bodyRoute || rng.bool())) {
      const id = rng.bool() ? encodeURIComponent(rng.text(rng.int(1, 80))) : `${rng.bytes(rng.int(1, 40)).toString("hex")}${rng.pick(["", "%00", "'", "%2F..", "%22", "%20"])}`;
      // "." and ".." are path syntax, not ids (the URL parser removes them)
      if (id === "." || id === ".." || id === "agent") continue;
      out.push(withBody({ method: spec.method, path: fill(spec.template, { ...params, [rng.pick(names)]: id }) }));
    } else {
      out.push({ method: spec.method, path: fill(spec.template, params), body: randomBadBody(rng, spec), headers: { "content-type": "application/json" } });
    }
  }
  return out;
}

/** A body with one of the route's bad field values, among random extra fields of random JSON. */
function randomBadBody(rng: Rng, spec: RouteSpec): string {
  const fields = Object.entries(spec.badFields ?? {});
  const [field, values] = rng.pick(fields);
  const junk: Record<string, unknown> = {};
  for (let i = rng.int(0, 5); i > 0; i -= 1) junk[rng.text(rng.int(1, 12))] = randomJson(rng, 3);
  return JSON.stringify({ ...spec.valid, ...junk, [field]: rng.pick(values) });
}

/** A random JSON value at most `depth` levels deep. */
function randomJson(rng: Rng, depth: number): unknown {
  switch (rng.int(0, depth > 0 ? 6 : 4)) {
    case 0:
      return null;
    case 1:
      return rng.bool();
    case 2:
      return rng.pick([0, -1, 1.5, 2 ** 53, -(2 ** 63), 1e308, rng.int(-1000, 1000)]);
    case 3:
    case 4:
      return rng.text(rng.int(0, 40));
    case 5:
      return Array.from({ length: rng.int(0, 4) }, () => randomJson(rng, depth - 1));
    default:
      return Object.fromEntries(Array.from({ length: rng.int(0, 4) }, () => [rng.text(rng.int(1, 10)), randomJson(rng, depth - 1)]));
  }
}

/** Odd requests a route may accept; they must never be a 5xx. */
function tolerantRequests(rng: Rng, spec: RouteSpec, params: Record<string, string>): RawRequest[] {
  const out: RawRequest[] = [];
  const path = fill(spec.template, params);
  const junk = ["-1", "0", "1e9", "abc", "%00", "%FF", "999999999999", "", "1,2", "true", "__proto__", encodeURIComponent(rng.text(30)), "x".repeat(5000)];
  for (const name of [...(spec.query ?? []), "limit", "__proto__", "constructor"]) {
    for (const value of junk) out.push({ method: spec.method, path: `${path}?${name}=${value}&${name}=${rng.pick(junk)}`, ...(spec.valid === undefined || spec.mutating ? {} : { body: JSON.stringify(spec.valid), headers: { "content-type": "application/json" } }) });
  }
  for (const value of ["-1", "abc", "1e999", "9".repeat(40), "0", "%00", " 3 "]) out.push({ method: spec.method, path, headers: { "last-event-id": value } });
  out.push({ method: "HEAD", path });
  out.push({ method: "OPTIONS", path, headers: { origin: "http://evil.example", "access-control-request-method": "POST" } });
  // path tricks around the route
  for (const trick of [`${path}/`, `${path}//`, `${path}/..`, `${path}/%2e%2e`, `/${path}`, `${path};x=1`, `${path}%20`, `${path}/../../package.json`, `${path}/..%2f..%2fpackage.json`]) out.push({ method: "GET", path: trick });
  if (!spec.mutating && spec.valid !== undefined) {
    // deep nesting and odd encodings inside bodies that are otherwise fine
    out.push({ method: spec.method, path, body: JSON.stringify({ ...spec.valid, extra: JSON.parse(deepJson(2_000, "object")) }), headers: { "content-type": "application/json" } });
    out.push({ method: spec.method, path, body: `\ufeff${JSON.stringify(spec.valid)}`, headers: { "content-type": "application/json" } });
    out.push({ method: spec.method, path, body: JSON.stringify(spec.valid), headers: { "content-type": "text/plain" } });
  }
  return out;
}

/**
 * Sends one request; a chunked upload (header `x-chunked`) goes without content-length. A
 * connection the server drops without an answer comes back as status 0 with the error as body.
 */
async function send(port: number, req: RawRequest): Promise<RawResponse> {
  let outgoing = req;
  if (req.headers?.["x-chunked"] === "1") {
    const { "x-chunked": _, ...headers } = req.headers;
    outgoing = { ...req, headers: { ...headers, "transfer-encoding": "chunked" } };
  }
  // large uploads go on a connection of their own, so an early 413 and close cannot take other requests with it
  const fresh = outgoing.body !== undefined && outgoing.body.length > 64 * 1024;
  try {
    return await rawRequest(port, outgoing, { timeoutMs: 20_000, fresh });
  } catch (error) {
    return { status: 0, headers: {}, body: `no answer: ${(error as Error).message}` };
  }
}

function describeRequest(req: RawRequest): string {
  const body = req.body === undefined ? "" : ` body=${JSON.stringify(String(req.body).slice(0, 120))}${String(req.body).length > 120 ? "…" : ""}`;
  return `${req.method} ${req.path.slice(0, 160)}${body}`;
}

/**
 * LangGraph Platform's routes (CONTRACT section 8): its prefixes, but for devmind's own run record,
 * events, decisions and cancel; of the path as the server sees it (dot segments, `%2e` too, resolved).
 */
function isLangGraphRoute(req: RawRequest): boolean {
  let path: string;
  try {
    path = new URL(req.path, "http://devmind.test").pathname;
  } catch {
    path = req.path.split("?")[0] ?? "";
  }
  if (!/^\/(assistants|threads|runs|store|internal)(\/|$)/.test(path)) return false;
  if (path.startsWith("/runs/crons")) return true;
  const own =
    (req.method === "GET" && /^\/runs\/?$|^\/runs\/[^/]+\/?$|^\/runs\/[^/]+\/events\/?$/.test(path)) ||
    (req.method === "POST" && /^\/runs\/[^/]+\/(decisions|cancel)\/?$/.test(path));
  return !own;
}

/**
 * The error body of CONTRACT section 8. On LangGraph's routes, the official server's: a plain-text
 * message, or for a body its schema refuses a 400 `{"success": false, "error": {"issues", "name": "ZodError"}}`;
 * elsewhere, and for the key check (401/403) everywhere: exactly {"error": CODE, "message": TEXT}.
 */
function errorShapeProblem(res: RawResponse, req?: RawRequest): string | null {
  const type = String(res.headers["content-type"] ?? "");
  if (req !== undefined && isLangGraphRoute(req) && res.status !== 401 && res.status !== 403) {
    if (type.startsWith("text/plain")) return res.body.trim() === "" ? "an empty text body" : null;
    try {
      const body = JSON.parse(res.body) as { success?: unknown; error?: { name?: unknown; issues?: unknown } };
      return res.status === 400 && body.success === false && body.error?.name === "ZodError" && Array.isArray(body.error.issues) ? null : `body ${res.body.slice(0, 200)}`;
    } catch {
      return `content-type ${type}, body ${res.body.slice(0, 200)}`;
    }
  }
  if (!type.startsWith("application/json")) return `content-type ${String(res.headers["content-type"])}`;
  try {
    const body = JSON.parse(res.body) as Record<string, unknown>;
    if (typeof body["error"] !== "string" || !/^[A-Z][A-Z0-9_]*$/.test(body["error"]) || typeof body["message"] !== "string" || Object.keys(body).length !== 2) return `body ${res.body.slice(0, 200)}`;
    return null;
  } catch {
    return `body not JSON: ${res.body.slice(0, 200)}`;
  }
}

describe.each(BACKENDS)("hostile HTTP input on %s", (backend) => {
  let owner: Database;
  let stack: ServerStack;
  let ids: SetupIds;

  beforeAll(async () => {
    owner = await openBackend(backend);
    stack = await startServerStack(owner, [{ tool_calls: [{ id: "call_w", name: "write_file", args: { path: "out.txt", content: "x" } }] }, { content: "done" }]);
    const { runtime } = stack;
    const first = await runtime.runs.create({ input: { messages: ["first"] } });
    const paused = await runtime.runs.wait(first.run_id, { timeoutMs: 45_000 });
    expect(paused).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true });
    // the decision creates the run that resumes the thread (the Platform's model): that one finishes
    const done = await runtime.runs.decide(first.run_id, { decisions: [{ type: "approve" }] }, { principal: "setup" });
    expect(done.resumes_run).toBe(first.run_id);
    const finished = await waitTerminal(stack, done.run_id);
    expect(finished).toBe("success");
    const waiting = await runtime.runs.create({ input: { messages: ["second"] } });
    expect(await runtime.runs.wait(waiting.run_id, { timeoutMs: 45_000 })).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true });
    const idle = await runtime.threads.create({ metadata: {} });
    const file = await new AttachmentStore(stack.db).put({ toolCallId: "setup", name: "a.txt", mimeType: "text/plain", bytes: new TextEncoder().encode("hello") });
    const history = await fetch(`${stack.url}/threads/${done.thread_id}/history`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    const states = (await history.json()) as { checkpoint: { checkpoint_id: string } }[];
    ids = {
      threadDone: done.thread_id,
      runDone: done.run_id,
      checkpointDone: states[0]?.checkpoint.checkpoint_id ?? "",
      threadWaiting: waiting.thread_id,
      runWaiting: waiting.run_id,
      threadIdle: idle.thread_id,
      file: file.id,
    };
    expect(ids.checkpointDone).not.toBe("");
  });
  afterAll(async () => {
    await stack?.close();
    await owner?.close();
  });

  itOnPrimary(backend)("refuses every hostile request with a 4xx in its route family's error form and changes nothing", async () => {
    const rng = new Rng(SEED);
    const failures: string[] = [];
    const perRoute: Record<string, number> = {};
    for (const { spec, params } of routes(ids)) {
      const requests = strictRequests(rng, spec, params);
      const before = await snapshotTables(stack.db);
      const responses = await runAll(requests, CONCURRENCY, (req) => send(stack.port, req));
      responses.forEach((res, index) => {
        const req = requests[index] as RawRequest;
        if (res.status < 400 || res.status >= 500) failures.push(`${res.status} for ${describeRequest(req)}: ${res.body.slice(0, 200)}`);
        else {
          const problem = errorShapeProblem(res, req);
          if (problem !== null) failures.push(`${res.status} with ${problem} for ${describeRequest(req)}`);
        }
      });
      const after = await snapshotTables(stack.db);
      for (const table of Object.keys({ ...before, ...after })) {
        if (JSON.stringify(before[table]) !== JSON.stringify(after[table])) failures.push(`${spec.method} ${spec.template}: table ${table} changed ${JSON.stringify(before[table])} -> ${JSON.stringify(after[table])}`);
      }
      perRoute[`${spec.method} ${spec.template}`] = requests.length;
      expect((await send(stack.port, { method: "GET", path: "/ok" })).status).toBe(200);
    }
    if (failures.length > 0) console.log(failures.join("\n"));
    expect(failures.slice(0, 40)).toEqual([]);
    // hundreds per route that takes ids or bodies
    for (const [route, count] of Object.entries(perRoute)) if (route.includes("{") || route.startsWith("POST")) expect(count, route).toBeGreaterThanOrEqual(STRICT_PER_ROUTE);
    expect((await send(stack.port, { method: "GET", path: "/health" })).status).toBe(200);
    // the real ids still answer: the batch refused only what was wrong
    expect((await send(stack.port, { method: "GET", path: `/threads/${ids.threadDone}/state/${ids.checkpointDone}` })).status).toBe(200);
    expect(JSON.parse((await send(stack.port, { method: "GET", path: `/runs/${ids.runWaiting}` })).body)).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true });
  }, HEAVY_TEST_MS);

  itOnPrimary(backend)("answers odd but possibly valid requests without a 5xx and stays up", async () => {
    const rng = new Rng(SEED + 1);
    const failures: string[] = [];
    let total = 0;
    for (const { spec, params } of routes(ids)) {
      const requests = tolerantRequests(rng, spec, params);
      total += requests.length;
      const responses = await runAll(requests, CONCURRENCY, (req) => send(stack.port, req));
      responses.forEach((res, index) => {
        const req = requests[index] as RawRequest;
        if (res.status >= 500 || res.status === 0) failures.push(`${res.status} for ${describeRequest(req)}: ${res.body.slice(0, 200)}`);
        else if (res.status >= 400 && req.method !== "HEAD") {
          const problem = errorShapeProblem(res, req);
          if (problem !== null) failures.push(`${res.status} with ${problem} for ${describeRequest(req)}`);
        }
      });
    }
    expect(failures.slice(0, 40)).toEqual([]);
    expect(total).toBeGreaterThan(500);
    expect((await send(stack.port, { method: "GET", path: "/ok" })).status).toBe(200);
    expect((await send(stack.port, { method: "GET", path: "/health" })).status).toBe(200);
  }, HEAVY_TEST_MS);

  it("serves only the page's own files: traversal and encoded tricks under /assets are 404 JSON", async () => {
    const tricks = [
      "/assets/../package.json",
      "/assets/..%2f..%2fpackage.json",
      "/assets/%2e%2e/%2e%2e/package.json",
      "/assets/%252e%252e%252fpackage.json",
      "/assets/..%5c..%5cpackage.json",
      "/assets/app.js%00.html",
      "/assets/app.js/",
      "/assets//app.js/../../../etc/passwd",
      "/assets/",
      "/assets",
      "/assets/web-assets.ts",
      "/assets/../routes.ts",
      "/src/server/web/assets/app.js",
      "/%2e%2e/package.json",
      "/..%2fpackage.json",
      "/package.json",
      "/.env",
      "/node_modules/hono/package.json",
      "/assets/index.html/..",
    ];
    for (const path of tricks) {
      const res = await send(stack.port, { method: "GET", path });
      expect(res.status, path).toBe(404);
      expect(errorShapeProblem(res), path).toBeNull();
      expect(res.body).not.toContain('"name": "devmind"');
    }
    const page = await send(stack.port, { method: "GET", path: "/" });
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["content-security-policy"]).toContain("default-src 'self'");
    expect(page.headers["content-security-policy"]).not.toContain("unsafe-inline");
    expect(page.headers["x-content-type-options"]).toBe("nosniff");
    const script = await send(stack.port, { method: "GET", path: "/assets/app.js" });
    expect(script.status).toBe(200);
    expect(script.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    const cached = await send(stack.port, { method: "GET", path: "/assets/app.js", headers: { "if-none-match": String(script.headers["etag"]) } });
    expect(cached.status).toBe(304);
    expect(cached.body).toBe("");

    // every file of the page is served, every module it imports is one of them, and none parses HTML from data
    const dir = defaultWebAssetsDir();
    const served = new Set<string>(WEB_ASSET_FILES.map((asset) => asset.file));
    expect(readdirSync(dir).sort()).toEqual([...served].sort());
    for (const { file, path } of WEB_ASSET_FILES) {
      const text = readFileSync(join(dir, file), "utf8");
      const res = await send(stack.port, { method: "GET", path });
      expect(res.status, path).toBe(200);
      expect(res.body, path).toBe(text);
      for (const match of text.matchAll(/from "\.\/([\w-]+\.js)"/g)) expect(served.has(match[1] ?? ""), `${file} imports ${match[1]}`).toBe(true);
      if (file.endsWith(".js")) expect(text, file).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/);
    }
  });
});

async function waitTerminal(stack: ServerStack, runId: string): Promise<string> {
  // bounded by time, not by a count of polls: a loaded machine makes each poll slow
  for (const deadline = Date.now() + 90_000; Date.now() < deadline; ) {
    const run = await stack.runtime.runs.get(runId);
    if (["success", "error", "timeout", "interrupted"].includes(run.status)) return run.status;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return (await stack.runtime.runs.get(runId)).status;
}
