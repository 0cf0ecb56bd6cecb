// Follows a run's event stream (`GET /runs/{id}/events`, Server-Sent Events) with fetch, since
// EventSource cannot send the API key header. Resumes after a drop with Last-Event-ID (the last
// seq seen), retrying with a bounded backoff, until the run ends or the caller stops it.

// a run that stops at an interrupt ends with run.interrupted (its thread waits; a resume is a new run)
const TERMINAL_EVENTS = new Set(["run.succeeded", "run.failed", "run.timeout", "run.cancelled", "run.interrupted"]);
const BACKOFF_MS = { first: 250, max: 5_000 };

/**
 * @typedef {{ type: string, seq?: number, [field: string]: unknown }} StreamEvent
 * @typedef {{ onEvent: (event: StreamEvent) => void, onStatus?: (status: "live" | "reconnecting" | "ended" | "error", detail?: string) => void, headers: () => Record<string, string>, errorOf: (response: Response) => Promise<Error> }} FollowOptions
 */

/**
 * Starts following `path`. Events are delivered once each, in seq order (a replayed seq is
 * dropped); events without a seq (live `model.delta`) are passed through.
 * @param {string} path
 * @param {FollowOptions} options
 * @returns {{ stop: () => void, poke: () => void, lastSeq: () => number }}
 */
export function followEvents(path, options) {
  let lastSeq = 0;
  let stopped = false;
  let ended = false;
  /** @type {AbortController | null} */
  let current = null;
  /** @type {(() => void) | null} */
  let wake = null;
  let failures = 0;

  const status = options.onStatus ?? (() => undefined);

  /** @param {number} ms */
  const pause = (ms) =>
    new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve(undefined);
      };
    });

  /** @param {StreamEvent} event */
  const deliver = (event) => {
    if (typeof event.seq === "number") {
      if (event.seq <= lastSeq) return;
      lastSeq = event.seq;
    }
    failures = 0;
    options.onEvent(event);
    if (TERMINAL_EVENTS.has(event.type)) ended = true;
  };

  const loop = async () => {
    while (!stopped && !ended) {
      current = new AbortController();
      try {
        /** @type {Record<string, string>} */
        const headers = options.headers();
        headers["accept"] = "text/event-stream";
        if (lastSeq > 0) headers["last-event-id"] = String(lastSeq);
        const response = await fetch(path, { headers, signal: current.signal, cache: "no-store" });
        if (!response.ok) {
          const error = await options.errorOf(response);
          // 4xx will not get better by retrying (bad id, missing key): stop and say why
          if (response.status >= 400 && response.status < 500) {
            status("error", error.message);
            return;
          }
          throw error;
        }
        if (response.body === null) throw new Error("empty event stream");
        status("live");
        await readStream(response.body, deliver);
      } catch (error) {
        if (stopped) return;
        status("reconnecting", error instanceof Error ? error.message : String(error));
      }
      if (stopped || ended) break;
      // a clean end of a live run's stream (e.g. the server closes while it waits for approval)
      // or a drop: come back after a bounded, growing pause, or at once when poked
      await pause(Math.min(BACKOFF_MS.max, BACKOFF_MS.first * 2 ** Math.min(failures, 5)));
      failures += 1;
    }
    if (!stopped) status("ended");
  };
  void loop();

  return {
    stop() {
      stopped = true;
      current?.abort();
      wake?.();
    },
    poke() {
      failures = 0;
      wake?.();
    },
    lastSeq: () => lastSeq,
  };
}

/**
 * Reads an SSE body and calls `deliver` with each event's parsed `data` (JSON). The event name
 * fills in `type` when the data has none; `id` fills in `seq`.
 * @param {ReadableStream<Uint8Array>} body
 * @param {(event: StreamEvent) => void} deliver
 */
async function readStream(body, deliver) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  /** @type {{ id?: string, event?: string, data: string[] }} */
  let pending = { data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let newline;
    while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
      // a CR at the end of a chunk may be the first half of CRLF: wait for the next chunk
      if (newline === buffer.length - 1 && buffer.endsWith("\r")) break;
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
      if (line === "") {
        if (pending.data.length > 0) dispatch(pending, deliver);
        pending = { data: [] };
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const raw = colon < 0 ? "" : line.slice(colon + 1);
      const text = raw.startsWith(" ") ? raw.slice(1) : raw;
      if (field === "data") pending.data.push(text);
      else if (field === "id") pending.id = text;
      else if (field === "event") pending.event = text;
    }
  }
}

/**
 * @param {{ id?: string, event?: string, data: string[] }} pending
 * @param {(event: StreamEvent) => void} deliver
 */
function dispatch(pending, deliver) {
  let data;
  try {
    data = JSON.parse(pending.data.join("\n"));
  } catch {
    return;
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) return;
  if (typeof data.type !== "string" && pending.event !== undefined) data.type = pending.event;
  if (typeof data.type !== "string") return;
  if (typeof data.seq !== "number" && pending.id !== undefined && /^\d+$/.test(pending.id)) data.seq = Number(pending.id);
  deliver(data);
}
