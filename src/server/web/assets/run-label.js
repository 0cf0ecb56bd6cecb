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
 * A graph's run input as a label: `graph: {"json": ...}`; null for a conversation's `{messages}`
 * input or no input.
 * @param {Record<string, any>} run
 * @returns {string | null}
 */
function graphInputText(run) {
  // a conversation's input is labelled by its first message (runLabel), not as JSON
  if (typeof run?.graph_id !== "string" || run.input === undefined || run.input === null || Array.isArray(run.input?.messages)) return null;
  try {
    return `${run.graph_id}: ${JSON.stringify(run.input)}`;
  } catch {
    return null;
  }
}

/**
 * The run list's label: the first input message's text, else the task this tab started it with
 * (`startedTask`), else a user graph's input as JSON, else a short id; one line, at most 80
 * characters.
 * @param {Record<string, any>} run
 * @param {string | undefined} [startedTask]
 * @returns {string}
 */
export function runLabel(run, startedTask) {
  const text = messageText(run?.input?.messages?.[0]) ?? startedTask ?? graphInputText(run) ?? `run ${String(run?.run_id).slice(0, 8)}`;
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > LABEL_CHARS ? `${flat.slice(0, LABEL_CHARS - 1)}…` : flat;
}
