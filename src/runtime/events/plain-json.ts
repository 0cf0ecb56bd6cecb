/**
 * A value as JSON the LangGraph clients read (the HTTP API, webhook bodies): LangChain messages
 * become message dicts (`{type: "ai", content, id, tool_calls, …}`, the shape `toDict()` gives,
 * flattened), the rest is plain JSON.
 */
export function plainJson(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value ?? null, function replacer(this: Record<string, unknown>, key: string, current: unknown) {
      const raw = this[key];
      if (raw !== null && typeof raw === "object" && typeof (raw as { toDict?: unknown }).toDict === "function" && typeof (raw as { getType?: unknown }).getType === "function") {
        const { type, data } = (raw as { toDict(): { type: string; data: Record<string, unknown> } }).toDict();
        return { ...data, type };
      }
      return current;
    }),
  ) as unknown;
}
