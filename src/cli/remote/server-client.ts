import { CLI_DEFAULTS, SERVER_DEFAULTS } from "../../constants.js";
import { DatabaseError, DevmindError, HttpRequestError, RunConflictError, type DevmindErrorCode } from "../../errors.js";

/**
 * The HTTP API of a local `devmind serve` / `dev`, as the CLI uses it when that server holds the
 * embedded database (local-server.ts): JSON requests as the local owner (the key the server wrote
 * into the data directory's 0600 lock file, which this user could read: the trust of opening the
 * database directly, so neither the API keys nor the project's auth handler are asked, and the
 * name a decision or resume gives with `by` is recorded as its principal), with the configured
 * API key too (the first of DEVMIND_API_KEYS) for a server that wrote no owner key; errors turned
 * back into the DevmindError the command would have thrown in process (same code, so the same
 * message shape and exit code), and a run's stored events read from `GET /runs/{id}/events` (SSE).
 * The owner key goes only to this server on loopback, in a header, and is never printed.
 */
export class ServerClient {
  constructor(
    readonly url: string,
    private readonly apiKey: string | undefined,
    private readonly holder: { pid: number; lockFile: string },
    private readonly ownerKey: string | null = null,
  ) {}

  private headers(extra: Record<string, string> = {}, audit: { by?: string; reason?: string } = {}): Record<string, string> {
    return {
      accept: "application/json",
      ...(this.apiKey === undefined ? {} : { "x-api-key": this.apiKey }),
      ...(this.ownerKey === null
        ? {}
        : {
            [SERVER_DEFAULTS.localOwnerHeader]: this.ownerKey,
            ...(audit.by === undefined ? {} : { [SERVER_DEFAULTS.localOwnerByHeader]: encodeURIComponent(audit.by) }),
            ...(audit.reason === undefined ? {} : { [SERVER_DEFAULTS.localOwnerReasonHeader]: encodeURIComponent(audit.reason) }),
          }),
      ...extra,
    };
  }

  /**
   * `method path` with a JSON body; the parsed JSON answer, or the error the server answered with.
   * `by`: who acts (a decision's or resume's principal, the CLI's `--by`), and `reason` (a resume's
   * `--reason`), recorded by the server for the local owner only.
   */
  async json<T>(method: "GET" | "POST", path: string, body?: unknown, audit: { by?: string; reason?: string } = {}): Promise<T> {
    const response = await this.fetch(path, { method, headers: this.headers(body === undefined ? {} : { "content-type": "application/json" }, audit), ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    if (!response.ok) throw await this.failure(response);
    return (await response.json()) as T;
  }

  /**
   * The stored events of run `runId` after seq `after`, in order (`follow`: until the run stops;
   * live-only events without a seq are left out); ends early when `signal` fires.
   */
  async *events<E extends { seq: number }>(runId: string, options: { after?: number; follow?: boolean; signal?: AbortSignal } = {}): AsyncGenerator<E> {
    const query = `after=${options.after ?? 0}&follow=${options.follow === true ? 1 : 0}`;
    const response = await this.fetch(`/runs/${encodeURIComponent(runId)}/events?${query}`, { headers: this.headers({ accept: "text/event-stream" }), ...(options.signal === undefined ? {} : { signal: options.signal }) });
    if (!response.ok) throw await this.failure(response);
    if (response.body === null) return;
    const decoder = new TextDecoder();
    let buffered = "";
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffered.indexOf("\n\n")) >= 0) {
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const data = block
            .split("\n")
            .filter((line) => line.startsWith("data:"))
            .map((line) => line.slice(5).trimStart())
            .join("\n");
          if (data === "") continue;
          const event = JSON.parse(data) as Partial<E>;
          if (typeof event.seq === "number") yield event as E;
        }
      }
    } catch (error) {
      if (options.signal?.aborted === true) return;
      throw error;
    }
  }

  private async fetch(path: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(`${this.url}${path}`, { ...init, signal: init.signal ?? AbortSignal.timeout(CLI_DEFAULTS.serverRequestTimeoutMs) });
    } catch (error) {
      if ((init.signal as AbortSignal | undefined)?.aborted === true) throw error;
      throw unreachable(this.url, this.holder, error);
    }
  }

  private async failure(response: Response): Promise<DevmindError> {
    const text = await response.text().catch(() => "");
    let body: { error?: unknown; message?: unknown; detail?: unknown } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // not JSON: the status says it
    }
    const message = typeof body.message === "string" ? body.message : typeof body.detail === "string" ? body.detail : `${response.status} ${text.slice(0, 200)}`;
    if (response.status === 401 || response.status === 403) {
      return new HttpRequestError("UNAUTHORIZED", `the devmind server at ${this.url} refused the request (${response.status}: ${message}); the CLI sends the first key of DEVMIND_API_KEYS: set it as the server has it`);
    }
    if (typeof body.error === "string" && isKnownCode(body.error)) return new DevmindError(body.error, message);
    if (response.status === 409) return new RunConflictError(message);
    return new HttpRequestError("REQUEST_INVALID", `the devmind server at ${this.url} answered ${response.status}: ${message}`);
  }
}

/** The DATABASE_LOCKED error for a server that holds the data directory but does not answer. */
export function unreachable(url: string, holder: { pid: number; lockFile: string }, cause: unknown): DatabaseError {
  // fetch's own error says "fetch failed"; its cause says why (ECONNREFUSED, a timeout, …)
  const inner = cause instanceof Error ? (cause.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  const why = typeof inner?.code === "string" ? inner.code : typeof inner?.message === "string" ? inner.message : cause instanceof Error ? cause.message : String(cause);
  return new DatabaseError(
    "DATABASE_LOCKED",
    `the embedded database is held by process ${holder.pid}, recorded as a devmind server at ${url}, which does not answer (${why}). ` +
      `If that server is starting or busy, try again; if process ${holder.pid} is not a devmind server any more, stop it, or delete ${holder.lockFile} once no devmind process uses the data directory.`,
    { details: { lockFile: holder.lockFile, owner: { pid: holder.pid, url } }, cause },
  );
}

const KNOWN_CODES: ReadonlySet<string> = new Set<DevmindErrorCode>([
  "RUN_NOT_FOUND",
  "RUN_CONFLICT",
  "RUN_INPUT_INVALID",
  "THREAD_NOT_FOUND",
  "ASSISTANT_NOT_FOUND",
  "GRAPH_NOT_FOUND",
  "REQUEST_INVALID",
  "NOT_FOUND",
  "BAD_REQUEST",
]);

function isKnownCode(code: string): code is DevmindErrorCode {
  return KNOWN_CODES.has(code);
}
