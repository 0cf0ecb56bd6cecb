/** A protocol event as the SSE transport sends it. */
export interface WireEvent {
  type: "event";
  seq: number;
  event_id: string;
  method: string;
  params: { namespace: string[]; data: Record<string, unknown>; node?: string };
}

/**
 * Opens `POST {url}/threads/{threadId}/stream/events` with `body` and reads protocol events until
 * `until` says so (given every event so far), the stream ends, or `max` events came; aborts the
 * request then. Bounded: gives up after `limitMs` and returns what came.
 */
export async function readProtocolEvents(
  url: string,
  threadId: string,
  body: Record<string, unknown>,
  options: { headers?: Record<string, string>; until?: (events: WireEvent[]) => boolean; max?: number; limitMs?: number } = {},
): Promise<{ status: number; events: WireEvent[]; error?: unknown }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.limitMs ?? 30_000);
  const events: WireEvent[] = [];
  try {
    const response = await fetch(`${url}/threads/${threadId}/stream/events`, { method: "POST", headers: { "content-type": "application/json", ...options.headers }, body: JSON.stringify(body), signal: controller.signal });
    if (response.status !== 200 || response.body === null) return { status: response.status, events, error: await response.json().catch(() => null) };
    const decoder = new TextDecoder();
    let buffer = "";
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut = buffer.indexOf("\n\n");
        while (cut >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = block
            .split("\n")
            .filter((line) => line.startsWith("data:"))
            .map((line) => line.slice(5).trimStart())
            .join("\n");
          if (data !== "") events.push(JSON.parse(data) as WireEvent);
          if (events.length >= (options.max ?? 5_000) || options.until?.(events) === true) return { status: 200, events };
          cut = buffer.indexOf("\n\n");
        }
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    }
    return { status: 200, events };
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

/** True for a root terminal lifecycle event (completed, failed, interrupted): a run's end. */
export function isRootEnd(event: WireEvent): boolean {
  return event.method === "lifecycle" && event.params.namespace.length === 0 && ["completed", "failed", "interrupted"].includes(String(event.params.data["event"]));
}

/** True once `count` runs ended (`isRootEnd`). */
export function rootEnds(count: number): (events: WireEvent[]) => boolean {
  return (events) => events.filter(isRootEnd).length >= count;
}

/** Sends one protocol command over HTTP; returns the HTTP status and the JSON answer. */
export async function sendCommand(url: string, threadId: string, command: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/threads/${threadId}/commands`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof command === "string" ? command : JSON.stringify(command) });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as Record<string, unknown> };
  } catch {
    return { status: response.status, body: { text } };
  }
}
