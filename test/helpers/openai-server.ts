/**
 * A local OpenAI-compatible chat-completions server for wire tests: node:http on 127.0.0.1, an
 * ephemeral port, answering each request with the next reply from a queue (streamed SSE chunks,
 * HTTP errors, slow or stalled replies). It records every request (authorization header value
 * removed, its presence kept) so tests can count attempts and inspect bodies.
 *
 * A request without `stream: true` gets the reply's chunks joined into one `chat.completion`.
 * Streams look like OpenAI's: `data: {chunk}` lines ending with `data: [DONE]`; a tool call's
 * first delta carries its index, id, type and whole name, and later deltas only argument
 * fragments (LangChain joins arguments, not names); a usage chunk (`choices: []`) comes last when
 * the request asked for `stream_options.include_usage`.
 *
 * `POST /v1/images/generations` answers from a queue of its own (`enqueueImages`: `imagesReply`,
 * `errorReply`, `slowReply`), and those requests are also kept in `imageRequests` with the
 * authorization header's value, so gen_image tests can check which key was sent.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** Token usage as OpenAI reports it. */
export interface WireUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** One streamed chunk's choice: a delta and, on the last one, a finish reason. */
export interface WireChunk {
  delta: Record<string, unknown>;
  finish_reason?: string | null;
}

/** What the server does with one request. */
export type Reply =
  | {
      kind: "stream";
      chunks: WireChunk[];
      /** Sent as a final `choices: []` chunk, only if the request asked for usage. */
      usage?: WireUsage;
      /** Pause between chunks (default 0). */
      chunkDelayMs?: number;
      /** Send the headers and the chunks, then never finish the response. */
      stall?: boolean;
      /** Send the first `after` chunks, then wait for `until` before the rest (tests that tokens arrive while the model still answers). */
      hold?: { after: number; until: Promise<void> };
    }
  | { kind: "status"; status: number; body: unknown; headers?: Record<string, string> }
  /** An images API answer (`POST /v1/images/generations`): `{created, data}` with status 200. */
  | { kind: "images"; data: { b64_json?: string; url?: string; revised_prompt?: string }[] }
  /** Wait `delayMs` before doing anything (headers included), then reply with `then`. */
  | { kind: "slow"; delayMs: number; then: Reply };

/** A recorded request. `headers` lacks `authorization`; `authorization` says whether it was sent. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  authorization: boolean;
  body: unknown;
}

/** A recorded images request; unlike chat requests it keeps the authorization header's value. */
export interface RecordedImageRequest {
  headers: Record<string, string | string[] | undefined>;
  authorization: string | undefined;
  body: unknown;
}

/** A valid 1x1 transparent PNG, base64. */
export const TINY_PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/** An images API success: one entry per base64 image (default: one tiny PNG). */
export function imagesReply(b64s: string[] = [TINY_PNG_B64], options: { revisedPrompt?: string } = {}): Reply {
  return { kind: "images", data: b64s.map((b64_json) => ({ b64_json, ...(options.revisedPrompt === undefined ? {} : { revised_prompt: options.revisedPrompt }) })) };
}

/** A tool call to stream: its first delta has the whole name, then one delta per argument part. */
export interface WireToolCall {
  id: string;
  name: string;
  argumentParts: string[];
}

/** A streamed text answer: one delta per part, then the finish reason (default "stop"). */
export function textReply(parts: string[], options: { finishReason?: string; usage?: WireUsage } = {}): Reply {
  const chunks: WireChunk[] = [{ delta: { role: "assistant", content: "" } }];
  for (const part of parts) chunks.push({ delta: { content: part } });
  chunks.push({ delta: {}, finish_reason: options.finishReason ?? "stop" });
  return { kind: "stream", chunks, ...(options.usage === undefined ? {} : { usage: options.usage }) };
}

/**
 * Streamed tool calls (finish reason "tool_calls"). With `interleave`, the calls' argument
 * fragments alternate (call 0, call 1, call 0, …) after both calls have started.
 */
export function toolCallReply(calls: WireToolCall[], options: { interleave?: boolean; content?: string[]; usage?: WireUsage } = {}): Reply {
  const chunks: WireChunk[] = [{ delta: { role: "assistant", content: null } }];
  for (const part of options.content ?? []) chunks.push({ delta: { content: part } });
  const starts = calls.map((call, index) => toolDelta({ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }));
  const fragments = calls.map((call, index) => call.argumentParts.map((part) => toolDelta({ index, function: { arguments: part } })));
  if (options.interleave === true) {
    chunks.push(...starts);
    const longest = Math.max(0, ...fragments.map((f) => f.length));
    for (let i = 0; i < longest; i += 1) for (const f of fragments) if (f[i] !== undefined) chunks.push(f[i] as WireChunk);
  } else {
    calls.forEach((_, index) => chunks.push(starts[index] as WireChunk, ...(fragments[index] as WireChunk[])));
  }
  chunks.push({ delta: {}, finish_reason: "tool_calls" });
  return { kind: "stream", chunks, ...(options.usage === undefined ? {} : { usage: options.usage }) };
}

/** An HTTP error in OpenAI's shape (`{"error": {message, type, code}}`). */
export function errorReply(status: number, message: string, headers: Record<string, string> = {}): Reply {
  return { kind: "status", status, headers, body: { error: { message, type: status === 429 ? "rate_limit_error" : "api_error", code: null } } };
}

/** Nothing at all (no headers) for `delayMs`, then `then` (default: a short text answer). */
export function slowReply(delayMs: number, then: Reply = textReply(["late"])): Reply {
  return { kind: "slow", delayMs, then };
}

/** Headers and the first parts of a text answer, then silence: the response never completes. */
export function stalledReply(parts: string[]): Reply {
  const chunks: WireChunk[] = [{ delta: { role: "assistant", content: "" } }, ...parts.map((part) => ({ delta: { content: part } }))];
  return { kind: "stream", chunks, stall: true };
}

function toolDelta(call: Record<string, unknown>): WireChunk {
  return { delta: { tool_calls: [call] } };
}

/**
 * The server. `start()` listens on 127.0.0.1 and an ephemeral port; `close()` ends open
 * connections (stalled responses included) so it never hangs. A request arriving with an empty
 * queue gets a 418 (not retried by clients), and is recorded like any other.
 */
export class OpenAiTestServer {
  readonly requests: RecordedRequest[] = [];
  /** Requests to `/v1/images/generations`, with the authorization value (tests check the key). */
  readonly imageRequests: RecordedImageRequest[] = [];
  readonly #queue: Reply[] = [];
  readonly #imageQueue: Reply[] = [];
  readonly #sockets = new Set<Socket>();
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  #server: Server | undefined;
  #port = 0;

  /** The base URL to give the client, e.g. `http://127.0.0.1:PORT/v1`. */
  get baseUrl(): string {
    if (this.#server === undefined) throw new Error("the test server is not started");
    return `http://127.0.0.1:${this.#port}/v1`;
  }

  /** Replies for the next requests, in order. */
  enqueue(...replies: Reply[]): void {
    this.#queue.push(...replies);
  }

  /** Replies for the next images requests, in order (a separate queue from chat replies). */
  enqueueImages(...replies: Reply[]): void {
    this.#imageQueue.push(...replies);
  }

  /** Forgets recorded requests and queued replies (between tests). */
  reset(): void {
    this.requests.length = 0;
    this.#queue.length = 0;
    this.imageRequests.length = 0;
    this.#imageQueue.length = 0;
  }

  /** Replies still queued (a test that expects every reply used checks this is 0). */
  get pending(): number {
    return this.#queue.length;
  }

  /** Starts listening; resolves with the base URL. */
  async start(): Promise<string> {
    const server = createServer((req, res) => void this.#handle(req, res));
    server.on("connection", (socket) => {
      this.#sockets.add(socket);
      socket.once("close", () => this.#sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("unexpected server address");
    this.#port = address.port;
    this.#server = server;
    return this.baseUrl;
  }

  /** Stops the server, destroying open connections and pending timers. */
  async close(): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    this.#server = undefined;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.#sockets) socket.destroy();
    await closed;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    const { authorization, ...headers } = req.headers;
    let body: unknown = text;
    try {
      body = text === "" ? undefined : JSON.parse(text);
    } catch {
      // keep the raw text
    }
    this.requests.push({ method: req.method ?? "", path: req.url ?? "", headers, authorization: authorization !== undefined, body });
    if (req.method === "POST" && req.url === "/v1/images/generations") {
      this.imageRequests.push({ headers, authorization, body });
      const reply = this.#imageQueue.shift();
      if (reply === undefined) {
        sendJson(res, 418, { error: { message: "test server: no scripted images reply left for this request", type: "test_error" } });
        return;
      }
      await this.#reply(reply, {}, res);
      return;
    }
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      sendJson(res, 404, { error: { message: `test server: no route ${req.method} ${req.url}`, type: "not_found" } });
      return;
    }
    const reply = this.#queue.shift();
    if (reply === undefined) {
      sendJson(res, 418, { error: { message: "test server: no scripted reply left for this request", type: "test_error" } });
      return;
    }
    await this.#reply(reply, body as { stream?: boolean; stream_options?: { include_usage?: boolean }; model?: string }, res);
  }

  async #reply(reply: Reply, request: { stream?: boolean; stream_options?: { include_usage?: boolean }; model?: string }, res: ServerResponse): Promise<void> {
    if (reply.kind === "slow") {
      await this.#sleep(reply.delayMs);
      if (res.destroyed) return;
      await this.#reply(reply.then, request, res);
      return;
    }
    if (reply.kind === "status") {
      sendJson(res, reply.status, reply.body, reply.headers);
      return;
    }
    if (reply.kind === "images") {
      sendJson(res, 200, { created: 1_700_000_000, data: reply.data });
      return;
    }
    if (request.stream !== true) {
      // a client that did not ask to stream gets the same answer whole, once it is complete
      if (reply.hold !== undefined) await reply.hold.until;
      if (reply.stall === true) return;
      sendJson(res, 200, completion(reply, request.model ?? "test-model"));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    res.flushHeaders();
    const model = request.model ?? "test-model";
    for (const [index, chunk] of reply.chunks.entries()) {
      if (reply.hold !== undefined && index === reply.hold.after) await reply.hold.until;
      if (res.destroyed) return;
      res.write(sse({ ...envelope(model), choices: [{ index: 0, delta: chunk.delta, logprobs: null, finish_reason: chunk.finish_reason ?? null }] }));
      if (reply.chunkDelayMs !== undefined && reply.chunkDelayMs > 0) await this.#sleep(reply.chunkDelayMs);
    }
    if (reply.stall === true) return;
    if (reply.usage !== undefined && request.stream_options?.include_usage === true) {
      res.write(sse({ ...envelope(model), choices: [], usage: reply.usage }));
    }
    res.end("data: [DONE]\n\n");
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        resolve();
      }, ms);
      this.#timers.add(timer);
    });
  }
}

function envelope(model: string): Record<string, unknown> {
  return { id: "chatcmpl-test", object: "chat.completion.chunk", created: 1_700_000_000, model, system_fingerprint: null };
}

/** A streamed reply's chunks joined into one `chat.completion` (text concatenated, tool call arguments joined by index), as OpenAI answers a request without `stream`. */
function completion(reply: Extract<Reply, { kind: "stream" }>, model: string): Record<string, unknown> {
  let content: string | null = null;
  let finishReason: string | null = null;
  const calls: { id?: unknown; type?: unknown; function: { name?: unknown; arguments: string } }[] = [];
  for (const chunk of reply.chunks) {
    const delta = chunk.delta as { content?: unknown; tool_calls?: { index: number; id?: unknown; type?: unknown; function?: { name?: unknown; arguments?: unknown } }[] };
    if (typeof delta.content === "string") content = (content ?? "") + delta.content;
    for (const part of delta.tool_calls ?? []) {
      const call = (calls[part.index] ??= { function: { arguments: "" } });
      if (part.id !== undefined) call.id = part.id;
      if (part.type !== undefined) call.type = part.type;
      if (part.function?.name !== undefined) call.function.name = part.function.name;
      if (typeof part.function?.arguments === "string") call.function.arguments += part.function.arguments;
    }
    if (chunk.finish_reason !== undefined && chunk.finish_reason !== null) finishReason = chunk.finish_reason;
  }
  const message = { role: "assistant", content, ...(calls.length === 0 ? {} : { tool_calls: calls }) };
  const { object: _object, ...rest } = envelope(model);
  return { ...rest, object: "chat.completion", choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }], ...(reply.usage === undefined ? {} : { usage: reply.usage }) };
}

function sse(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (text += chunk));
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });
}
