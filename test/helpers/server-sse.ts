/** One server-sent event as a test reads it. */
export interface SseEvent {
  event: string;
  data: unknown;
  id: string | undefined;
}

/**
 * Reads a `text/event-stream` response to its end (at most `max` events, a bound so no test reads
 * forever) and parses each event's JSON data. Comment lines (heartbeats) are skipped.
 */
export async function readSse(response: Response, max = 5_000): Promise<SseEvent[]> {
  if (response.body === null) throw new Error("no body");
  const text = await new Response(response.body).text();
  const events: SseEvent[] = [];
  for (const block of text.split(/\n\n/)) {
    let event = "message";
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line === "" || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
      else if (field === "id") id = value;
    }
    if (data.length === 0) continue;
    events.push({ event, id, data: JSON.parse(data.join("\n")) as unknown });
    if (events.length > max) throw new Error(`more than ${max} events`);
  }
  return events;
}
