// DOM helpers of the devmind page. Every piece of text goes in through text nodes (textContent),
// never through HTML parsing: model output, tool arguments and results are data, not markup.

/**
 * Creates an element. `props` sets attributes (strings), `dataset` entries (`data-*`), event
 * handlers (`onclick`, ...) and `text` (textContent). Children are nodes or strings (as text).
 * @param {string} tag
 * @param {Record<string, unknown>} [props]
 * @param {...(Node | string | null | undefined | false)} children
 * @returns {HTMLElement}
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), /** @type {EventListener} */ (value));
    else if (value === true) node.setAttribute(key, "");
    else node.setAttribute(key, String(value));
  }
  append(node, ...children);
  return node;
}

/**
 * Appends children; strings become text nodes.
 * @param {Node} parent
 * @param {...(Node | string | null | undefined | false)} children
 */
export function append(parent, ...children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
}

/**
 * Looks up an element the page's HTML defines; a missing one is a bug in index.html.
 * @template {HTMLElement} T
 * @param {string} id
 * @returns {T}
 */
export function byId(id) {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`page element #${id} is missing`);
  return /** @type {T} */ (node);
}

/**
 * Pretty JSON for display (as text). Values that do not serialise are shown as their string.
 * @param {unknown} value
 * @returns {string}
 */
export function prettyJson(value) {
  try {
    const text = JSON.stringify(value, null, 2);
    return text === undefined ? String(value) : text;
  } catch {
    return String(value);
  }
}

/**
 * A one-line summary of tool arguments, e.g. `a=2, b=3` or `path="notes.txt"`, cut to `max` chars.
 * @param {unknown} args
 * @param {number} [max]
 * @returns {string}
 */
export function summarize(args, max = 80) {
  let text;
  if (args !== null && typeof args === "object" && !Array.isArray(args)) {
    text = Object.entries(args).map(([key, value]) => `${key}=${oneLine(value)}`).join(", ");
  } else {
    text = oneLine(args);
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** @param {unknown} value @returns {string} */
function oneLine(value) {
  const text = typeof value === "string" ? JSON.stringify(value) : prettyJsonCompact(value);
  return text.replace(/\s+/g, " ");
}

/** @param {unknown} value @returns {string} */
function prettyJsonCompact(value) {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * Formats a timestamp as local time of day.
 * @param {string | undefined} at
 * @returns {string}
 */
export function timeOf(at) {
  if (typeof at !== "string") return "";
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? "" : date.toLocaleTimeString();
}
