// The label of a run in the page's run list: its task, read from the stored input whatever shape
// the first message was stored in. Pure (no DOM), so it is unit-tested in Node.

const LABEL_CHARS = 80;

/**
 * The text of one input message: a plain string; an OpenAI/LangGraph SDK message
 * `{role, content}`; a stored LangChain message `{type, data: {content}}`; a serialized one
 * `{lc, kwargs: {content}}`; content as a string or as parts `[{type: "text", text}]`.
 * @param {unknown} message
 * @returns {string | null}
 */
export function messageText(message) {
  if (typeof message === "string") return message;
  if (message === null || typeof message !== "object") return null;
  const record = /** @type {Record<string, any>} */ (message);
  const content = record.content ?? record.data?.content ?? record.kwargs?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    const text = content.map((part) => (typeof part === "string" ? part : typeof part?.text === "string" ? part.text : "")).join("");
    return text === "" ? null : text;
  }
  return null;
}

/**
 * A graph's input as a short line, most telling part first: string values as they are, numbers
 * and booleans after their key, lists of strings joined, anything else as `key {…}` / `key […]`;
 * ` · ` between fields, in `order` (the graph's schema order; a stored input's keys may come back
 * in another order), the rest after. Null for a conversation's `{messages}` input or no input.
 * @param {unknown} input
 * @param {string[]} [order]
 * @returns {string | null}
 */
export function inputSummary(input, order = []) {
  if (input === undefined || input === null) return null;
  if (typeof input !== "object") return String(input);
  if (Array.isArray(input)) return input.length === 0 ? null : JSON.stringify(input);
  const record = /** @type {Record<string, unknown>} */ (input);
  if (Array.isArray(record["messages"])) return null;
  const rank = (/** @type {string} */ key) => (order.includes(key) ? order.indexOf(key) : order.length);
  const entries = Object.entries(record).sort(([a], [b]) => rank(a) - rank(b));
  const parts = entries.flatMap(([key, value]) => {
    if (value === null || value === undefined || value === "") return [];
    if (typeof value === "string") return [value];
    if (typeof value === "number" || typeof value === "boolean") return [`${key} ${value}`];
    if (Array.isArray(value)) return value.every((item) => typeof item === "string" || typeof item === "number") ? [`${key} ${value.join(", ")}`] : [`${key} [${value.length}]`];
    return [`${key} {…}`];
  });
  return parts.length === 0 ? null : parts.join(" · ");
}

/**
 * The run list's label (beside the graph's name, `runGraph`): the first input message's text,
 * else the task this tab started it with (`startedTask`), else the start of a graph's input
 * (`inputSummary`), else a short id; one line, at most 80 characters.
 * @param {Record<string, any>} run
 * @param {string | undefined} [startedTask]
 * @param {string[]} [order]  the graph's input fields in schema order
 * @returns {string}
 */
export function runLabel(run, startedTask, order) {
  const text = messageText(run?.input?.messages?.[0]) ?? startedTask ?? inputSummary(run?.input, order) ?? `run ${String(run?.run_id).slice(0, 8)}`;
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > LABEL_CHARS ? `${flat.slice(0, LABEL_CHARS - 1)}…` : flat;
}

/**
 * The graph a run belongs to, for the run list: its `graph_id` (devmind's records), else the
 * assistant it was started as; null when neither is known.
 * @param {Record<string, any>} run
 * @returns {string | null}
 */
export function runGraph(run) {
  const graph = run?.graph_id ?? run?.assistant_id;
  return typeof graph === "string" && graph !== "" ? graph : null;
}
