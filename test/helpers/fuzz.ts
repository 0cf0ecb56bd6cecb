import { request as httpRequest, Agent } from "node:http";
import type { Database } from "../../src/db/types.js";

/**
 * A small deterministic PRNG (mulberry32): the same seed gives the same hostile requests on every
 * run, so a failure is reproducible from the seed printed with it.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from an empty list");
    return items[this.int(0, items.length - 1)] as T;
  }

  bool(p = 0.5): boolean {
    return this.next() < p;
  }

  bytes(length: number): Buffer {
    const out = Buffer.alloc(length);
    for (let i = 0; i < length; i += 1) out[i] = this.int(0, 255);
    return out;
  }

  /** A string of random code points (including control characters, surrogates' neighbours, RTL, emoji). */
  text(length: number): string {
    const ranges: [number, number][] = [[0, 0x1f], [0x20, 0x7e], [0x80, 0x2ff], [0x590, 0x6ff], [0x2000, 0x206f], [0x4e00, 0x4fff], [0xfff0, 0xfffd], [0x1f300, 0x1f64f]];
    let out = "";
    for (let i = 0; i < length; i += 1) {
      const [lo, hi] = this.pick(ranges);
      out += String.fromCodePoint(this.int(lo, hi));
    }
    return out;
  }
}

/**
 * Path segments that are not valid ids, already in request-target form (percent-encoded where
 * Node's HTTP client would refuse the raw character): not uuids, SQL, traversal, NUL, unicode,
 * very long, uuids with junk around them.
 */
export function hostileIds(rng: Rng): string[] {
  const fixed = [
    "x",
    "0",
    "-1",
    "null",
    "undefined",
    "NaN",
    "%20",
    "%00",
    "abc%00def",
    // (".." and ".%2e" are normalised away by the URL parser, so they name another route: see the path tricks)
    "...",
    "%2e",
    "..%2f..%2fetc%2fpasswd",
    "%2e%2e%2f%2e%2e%2fpackage.json",
    "%252e%252e%252f",
    "..%5c..%5cwindows",
    "'%20OR%20'1'%3D'1",
    "1%3B%20DROP%20TABLE%20runs%3B--",
    "%22%3Bselect%20pg_sleep(1)%3B--",
    "00000000-0000-0000-0000-000000000000",
    "00000000-0000-0000-0000-00000000000g",
    "00000000-0000-0000-0000-0000000000000",
    "00000000000000000000000000000000",
    "%7B%7D",
    "%5B%5D",
    "%E2%80%AE%F0%9F%92%A3",
    "%C0%AE%C0%AE",
    "%FF%FE",
    "a".repeat(300),
    "9".repeat(5000),
    encodeURIComponent(rng.text(40)),
    encodeURIComponent(`${randomUuid(rng)}' --`),
    encodeURIComponent(` ${randomUuid(rng)} `),
    randomUuid(rng).toUpperCase(),
    randomUuid(rng),
  ];
  const generated = Array.from({ length: 12 }, () => encodeURIComponent(rng.text(rng.int(1, 64))));
  return [...fixed, ...generated];
}

/** A uuid-shaped string from the PRNG (valid syntax, almost surely not an existing row). */
export function randomUuid(rng: Rng): string {
  const hex = rng.bytes(16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** A JSON value nested `depth` levels deep, as text (built without recursion). */
export function deepJson(depth: number, kind: "array" | "object"): string {
  return kind === "array" ? "[".repeat(depth) + "]".repeat(depth) : '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
}

/** One raw HTTP request of the hostile suite. */
export interface RawRequest {
  method: string;
  /** The request target exactly as sent (not normalised: `..` and `%2f` go out as written). */
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

/** The answer to a raw request. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 16 });
const quieted = new WeakSet<object>();

/**
 * Sends a request with `node:http`, so the path is not normalised the way fetch would. Streams
 * (text/event-stream answers) are read only up to `maxBodyBytes` and then dropped.
 */
export function rawRequest(port: number, req: RawRequest, options: { timeoutMs?: number; maxBodyBytes?: number; fresh?: boolean } = {}): Promise<RawResponse> {
  const maxBody = options.maxBodyBytes ?? 1_000_000;
  return new Promise((resolve, reject) => {
    const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body);
    const headers: Record<string, string> = { ...(req.headers ?? {}) };
    if (body !== undefined && headers["content-length"] === undefined && headers["transfer-encoding"] === undefined) headers["content-length"] = String(body.length);
    // `fresh`: a connection of its own, closed after the answer (a server may close early on an oversized upload)
    const outgoing = httpRequest({ host: "127.0.0.1", port, method: req.method, path: req.path, headers, agent: options.fresh === true ? false : agent }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") });
      };
      res.on("data", (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= maxBody || String(res.headers["content-type"] ?? "").startsWith("text/event-stream")) {
          finish();
          res.destroy();
        }
      });
      res.on("end", finish);
      res.on("close", finish);
      res.on("error", finish);
    });
    const timer = setTimeout(() => {
      outgoing.destroy(new Error(`no answer in ${options.timeoutMs ?? 10_000} ms: ${req.method} ${req.path.slice(0, 200)}`));
    }, options.timeoutMs ?? 10_000);
    outgoing.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    // an early answer (413) may close the socket while the body is still going out: that is the answer, not an error
    outgoing.on("socket", (socket) => {
      if (quieted.has(socket)) return;
      quieted.add(socket);
      socket.on("error", () => undefined);
    });
    if (body !== undefined) outgoing.end(body);
    else outgoing.end();
  });
}

/** Runs `requests` with at most `concurrency` in flight; results in input order. */
export async function runAll<T, R>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await fn(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
  return results;
}

/** A table's row count and a digest of its rows' text. */
export type TableSnapshot = Record<string, { count: number; digest: string }>;

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Counts and digests every table of the database's schema, so a test can show that a batch of
 * requests changed nothing. Table names come from the catalog (and are checked to be plain
 * identifiers), never from input.
 */
export async function snapshotTables(db: Database): Promise<TableSnapshot> {
  const { rows } = await db.query("SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY table_name", [db.schema]);
  const out: TableSnapshot = {};
  for (const row of rows) {
    const table = String(row["table_name"]);
    if (!IDENTIFIER.test(table) || !IDENTIFIER.test(db.schema)) throw new Error(`unexpected identifier ${table}`);
    const result = await db.query(`SELECT count(*)::int AS n, coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') AS digest FROM "${db.schema}"."${table}" t`);
    const first = result.rows[0] ?? {};
    out[table] = { count: Number(first["n"]), digest: String(first["digest"]) };
  }
  return out;
}
