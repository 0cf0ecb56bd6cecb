// A JSON value as a foldable tree (<details> per object and array, so folding needs no script
// and works with the keyboard): keys, typed leaves, counts on folded branches, and LangChain
// messages as readable entries (role, text, tool calls) with their fields folded below. Text goes
// in as text nodes only. Which branches are open survives a re-render (`TreeFolds`).

import { el, summarize } from "./dom.js";
import { messageText } from "./run-label.js";

/** Branches deeper than this start folded (unless the user opened them). */
const OPEN_DEPTH = 2;
/** A folded string longer than this is cut in its branch's summary line. */
const PREVIEW_CHARS = 80;
/** Children shown per branch; the rest are summarised in one line (the JSON view has them all). */
const MAX_CHILDREN = 500;

/** Roles of LangChain messages, by the `type` a stored message carries or the class name of a serialised one. */
const MESSAGE_TYPES = new Map([
  ["human", "human"], ["HumanMessage", "human"], ["user", "human"],
  ["ai", "ai"], ["AIMessage", "ai"], ["AIMessageChunk", "ai"], ["assistant", "ai"],
  ["tool", "tool"], ["ToolMessage", "tool"],
  ["system", "system"], ["SystemMessage", "system"], ["developer", "system"],
  ["function", "function"], ["remove", "remove"], ["RemoveMessage", "remove"],
]);

/** Which branches of a tree the user opened or closed, by path, kept across re-renders. */
export class TreeFolds {
  constructor() {
    /** @type {Map<string, boolean>} */
    this.open = new Map();
  }

  /** @param {string} path @param {boolean} fallback */
  isOpen(path, fallback) {
    return this.open.get(path) ?? fallback;
  }
}

/**
 * Renders `value` as a tree; the root's entries are listed directly (no fold for the root).
 * @param {unknown} value
 * @param {{ folds?: TreeFolds, testId?: string, openDepth?: number }} [options]
 * @returns {HTMLElement}
 */
export function jsonTree(value, options = {}) {
  const folds = options.folds ?? new TreeFolds();
  const openDepth = options.openDepth ?? OPEN_DEPTH;
  const root = el("div", { class: "json-tree", "data-testid": options.testId ?? "json-tree", role: "tree" });
  if (isBranch(value) && !isMessage(value)) root.append(...children(value, "$", 1, folds, openDepth));
  else root.append(entry(null, value, "$", 0, folds, openDepth));
  return root;
}

/** @param {unknown} value @returns {value is object} */
function isBranch(value) {
  return value !== null && typeof value === "object";
}

/**
 * The role of a LangChain message in any shape the API gives (`{type, content}`, `{role,
 * content}`, serialised `{lc, id: [..., "AIMessage"], kwargs}`), else null.
 * @param {unknown} value
 * @returns {string | null}
 */
export function messageRole(value) {
  if (!isBranch(value) || Array.isArray(value)) return null;
  const record = /** @type {Record<string, any>} */ (value);
  const body = record.lc !== undefined && isBranch(record.kwargs) ? record.kwargs : record;
  if (!("content" in body)) return null;
  const kind = Array.isArray(record.id) && record.lc !== undefined ? record.id.at(-1) : (record.type ?? record.role);
  return typeof kind === "string" ? (MESSAGE_TYPES.get(kind) ?? null) : null;
}

/** @param {unknown} value */
function isMessage(value) {
  return messageRole(value) !== null;
}

/**
 * The entries of a branch (object keys or array items), at most MAX_CHILDREN.
 * @param {object} value
 * @param {string} path
 * @param {number} depth
 * @param {TreeFolds} folds
 * @param {number} openDepth
 * @returns {HTMLElement[]}
 */
function children(value, path, depth, folds, openDepth) {
  const pairs = Array.isArray(value) ? value.map((item, index) => [String(index), item]) : Object.entries(value);
  const shown = pairs.slice(0, MAX_CHILDREN).map(([key, item]) => entry(String(key), item, `${path}/${encodeKey(String(key))}`, depth, folds, openDepth));
  if (pairs.length > MAX_CHILDREN) shown.push(el("div", { class: "jt-more", text: `… ${pairs.length - MAX_CHILDREN} more (see the JSON view)` }));
  return shown;
}

/** @param {string} key */
function encodeKey(key) {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

/**
 * One entry: a leaf (`key: value`) or a fold (`key {n keys}` / `key [n items]` / a message).
 * @param {string | null} key
 * @param {unknown} value
 * @param {string} path
 * @param {number} depth
 * @param {TreeFolds} folds
 * @param {number} openDepth
 * @returns {HTMLElement}
 */
function entry(key, value, path, depth, folds, openDepth) {
  const keyNode = key === null ? null : el("span", { class: "jt-key", text: key });
  if (!isBranch(value)) {
    return el("div", { class: "jt-leaf", role: "treeitem", "data-path": path }, keyNode, keyNode === null ? null : el("span", { class: "jt-colon", text: ": " }), leaf(value));
  }
  const role = messageRole(value);
  const fold = el("details", { class: role === null ? "jt-branch" : "jt-branch jt-message", role: "treeitem", "data-path": path, ...(role === null ? {} : { "data-role": role }) });
  const summary = el("summary", { class: "jt-summary" }, keyNode, role === null ? el("span", { class: "jt-note", text: branchNote(value) }) : messageSummary(value, role));
  fold.append(summary);
  const body = el("div", { class: "jt-children", role: "group" });
  let filled = false;
  // children are built on first open: a large folded state costs nothing until looked at
  const fill = () => {
    if (filled) return;
    filled = true;
    if (role === null) body.append(...children(value, path, depth + 1, folds, openDepth));
    else body.append(...messageBody(/** @type {Record<string, any>} */ (value), path, depth + 1, folds, openDepth));
  };
  const open = folds.isOpen(path, depth < openDepth || (role !== null && depth <= openDepth));
  if (open) {
    fill();
    fold.setAttribute("open", "");
  }
  fold.addEventListener("toggle", () => {
    const isOpen = /** @type {HTMLDetailsElement} */ (fold).open;
    folds.open.set(path, isOpen);
    if (isOpen) fill();
  });
  fold.append(body);
  return fold;
}

/** @param {object} value @returns {string} */
function branchNote(value) {
  if (Array.isArray(value)) {
    const messages = value.length > 0 && value.every(isMessage);
    return messages ? ` [${value.length} message${value.length === 1 ? "" : "s"}]` : ` [${value.length} item${value.length === 1 ? "" : "s"}]`;
  }
  const count = Object.keys(value).length;
  return count === 0 ? " {}" : ` {${count} key${count === 1 ? "" : "s"}}`;
}

/** @param {unknown} value @returns {HTMLElement} */
function leaf(value) {
  // a string as it reads (line breaks kept), in quotes so "" and "null" are told from the rest
  if (typeof value === "string") return el("span", { class: "jt-value jt-string", text: `"${value}"` });
  if (typeof value === "number" || typeof value === "bigint") return el("span", { class: "jt-value jt-number", text: String(value) });
  if (typeof value === "boolean") return el("span", { class: "jt-value jt-boolean", text: String(value) });
  return el("span", { class: "jt-value jt-null", text: value === undefined ? "undefined" : "null" });
}

/**
 * The summary line of a message: its role and the start of its text (or of its tool calls).
 * @param {object} value
 * @param {string} role
 */
function messageSummary(value, role) {
  const body = messageBodyFields(value);
  const text = messageText(body) ?? "";
  const calls = toolCalls(body);
  const preview = text !== "" ? text : calls.length > 0 ? calls.map((call) => `${call.name}(${summarize(call.args, 40)})`).join(", ") : "";
  const flat = preview.replace(/\s+/g, " ").trim();
  return el(
    "span",
    { class: "jt-message-head" },
    el("span", { class: `jt-role jt-role-${role}`, text: role }),
    typeof body.name === "string" && body.name !== "" ? el("span", { class: "jt-note", text: ` ${body.name}` }) : null,
    el("span", { class: "jt-preview", text: ` ${flat.length > PREVIEW_CHARS ? `${flat.slice(0, PREVIEW_CHARS - 1)}…` : flat}` }),
  );
}

/** @param {object} value @returns {Record<string, any>} */
function messageBodyFields(value) {
  const record = /** @type {Record<string, any>} */ (value);
  return record.lc !== undefined && isBranch(record.kwargs) ? record.kwargs : record;
}

/** @param {Record<string, any>} body @returns {{ name: string, args: unknown, id: string | null }[]} */
function toolCalls(body) {
  const list = Array.isArray(body.tool_calls) ? body.tool_calls : [];
  return list
    .filter((/** @type {unknown} */ call) => isBranch(call) && typeof (/** @type {Record<string, any>} */ (call)).name === "string")
    .map((/** @type {Record<string, any>} */ call) => ({ name: String(call.name), args: call.args ?? {}, id: typeof call.id === "string" ? call.id : null }));
}

/**
 * An open message: its full text, its tool calls (one line each), and all its fields folded.
 * @param {Record<string, any>} value
 * @param {string} path
 * @param {number} depth
 * @param {TreeFolds} folds
 * @param {number} openDepth
 * @returns {HTMLElement[]}
 */
function messageBody(value, path, depth, folds, openDepth) {
  const body = messageBodyFields(value);
  const text = messageText(body);
  const parts = [];
  if (text !== null && text !== "") parts.push(el("div", { class: "jt-message-text", "data-testid": "message-text", text }));
  for (const call of toolCalls(body)) {
    parts.push(el("div", { class: "jt-tool-call", "data-testid": "message-tool-call" }, el("span", { class: "jt-call-name", text: call.name }), el("span", { text: `(${summarize(call.args, 200)})` }), call.id === null ? null : el("span", { class: "jt-note", text: ` ${call.id}` })));
  }
  if (typeof body.tool_call_id === "string") parts.push(el("div", { class: "jt-note", text: `result of ${body.tool_call_id}${typeof body.status === "string" ? ` (${body.status})` : ""}` }));
  const fields = el("details", { class: "jt-branch", role: "treeitem", "data-path": `${path}/~fields` }, el("summary", { class: "jt-summary" }, el("span", { class: "jt-note", text: "all fields" })));
  const inner = el("div", { class: "jt-children", role: "group" });
  let filled = false;
  const fill = () => {
    if (filled) return;
    filled = true;
    inner.append(...children(value, path, depth + openDepth, folds, openDepth));
  };
  if (folds.isOpen(`${path}/~fields`, false)) {
    fill();
    fields.setAttribute("open", "");
  }
  fields.addEventListener("toggle", () => {
    const isOpen = /** @type {HTMLDetailsElement} */ (fields).open;
    folds.open.set(`${path}/~fields`, isOpen);
    if (isOpen) fill();
  });
  fields.append(inner);
  parts.push(fields);
  return parts;
}
