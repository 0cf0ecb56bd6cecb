/** A message as the wire shows it: a dict with `type` and `content`. */
type WireMessage = Record<string, unknown> & { type: string };

function isWireMessage(value: unknown): value is WireMessage {
  return value !== null && typeof value === "object" && !Array.isArray(value) && typeof (value as { type?: unknown }).type === "string" && "content" in value;
}

function idOf(message: WireMessage): string | undefined {
  return typeof message["id"] === "string" && message["id"] !== "" ? message["id"] : undefined;
}

/** Same message but for its id: type, content, and the tool call it answers. */
function sameMessage(written: WireMessage, stored: WireMessage): boolean {
  return written.type === stored.type && JSON.stringify(written["content"]) === JSON.stringify(stored["content"]) && (written["tool_call_id"] ?? null) === (stored["tool_call_id"] ?? null);
}

function messagesIn(value: unknown): WireMessage[] {
  return Array.isArray(value) ? value.filter(isWireMessage) : [];
}

/**
 * A task's writes (wire form, `{channel: value}`) with the ids its messages got in the state.
 *
 * A node may return a message without an id (a `ToolMessage` it built); LangGraph's messages
 * reducer gives it one as it lands in the state, on the very object the node returned, so the
 * official server's `updates` and `tasks` parts (serialised later) carry the id the state has.
 * devmind reads the writes back from storage, where the message has no id yet: each such message
 * gets the id of the first message of the same type, content and tool call that is new in `after`
 * (the checkpoint the writes made) on that channel, compared with `before`. `claimed` collects the
 * ids given out, so two tasks of one step writing equal messages get different ones.
 */
export function withStateMessageIds(writes: unknown, before: unknown, after: unknown, claimed: Set<string>): unknown {
  if (writes === null || typeof writes !== "object" || Array.isArray(writes)) return writes;
  const beforeValues = (before ?? {}) as Record<string, unknown>;
  const afterValues = (after ?? {}) as Record<string, unknown>;
  let changed = false;
  const result: Record<string, unknown> = {};
  for (const [channel, value] of Object.entries(writes as Record<string, unknown>)) {
    const single = isWireMessage(value);
    const written = single ? [value] : Array.isArray(value) ? value : undefined;
    if (written === undefined || !written.some((item) => isWireMessage(item) && idOf(item) === undefined)) {
      result[channel] = value;
      continue;
    }
    const known = new Set(messagesIn(beforeValues[channel]).map(idOf));
    const fresh = messagesIn(afterValues[channel]).filter((message) => {
      const id = idOf(message);
      return id !== undefined && !known.has(id);
    });
    const filled = written.map((item) => {
      if (!isWireMessage(item) || idOf(item) !== undefined) return item;
      const match = fresh.find((stored) => !claimed.has(idOf(stored) as string) && sameMessage(item, stored));
      if (match === undefined) return item;
      const id = idOf(match) as string;
      claimed.add(id);
      changed = true;
      return { ...item, id };
    });
    result[channel] = single ? filled[0] : filled;
  }
  return changed ? result : writes;
}
