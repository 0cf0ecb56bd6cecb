// One entry of the page's run list: the run's status (as runListStatus tells it), its graph, the
// start of its input and when it was created. Text only (textContent): inputs are data.

import { el, timeOf } from "./dom.js";
import { runGraph } from "./run-label.js";
import { runListStatus } from "./run-status.js";

/**
 * The status badge of a run in the list: the one place the list's status is drawn, so a marker
 * (e.g. calls whose outcome is unknown) is added here.
 * @param {Record<string, any>} run
 * @param {{ threadWaiting?: boolean }} [thread]
 * @returns {HTMLElement}
 */
export function statusBadge(run, thread) {
  const status = runListStatus(run, thread);
  return el("span", { class: "badge", "data-status": status.key, "data-testid": "run-item-status", title: status.title, text: status.text });
}

/**
 * A list entry (`li` with its button): status badge, graph name and time on the first line, the
 * label on the second.
 * @param {Record<string, any>} run
 * @param {{ label: string, onSelect: () => void, threadWaiting?: boolean }} options
 * @returns {HTMLElement}
 */
export function runListItem(run, options) {
  const graph = runGraph(run);
  return el(
    "li",
    { "data-run-id": String(run.run_id) },
    el(
      "button",
      { type: "button", class: "run-item", "data-testid": "run-item", title: options.label, onclick: options.onSelect },
      el(
        "span",
        { class: "run-line" },
        statusBadge(run, { threadWaiting: options.threadWaiting === true }),
        ...unknownMark(run),
        el("span", { class: "run-graph", "data-testid": "run-item-graph", text: graph ?? "" }),
        el("time", { text: timeOf(run.created_at) }),
      ),
      el("span", { class: "run-task", "data-testid": "run-item-label", text: options.label }),
    ),
  );
}

/**
 * A marker beside the status of a run with tool calls whose outcome is unknown
 * (TOOL_OUTCOME_UNKNOWN: they may or may not have taken effect); none for other runs.
 * @param {Record<string, unknown>} run
 */
export function unknownMark(run) {
  const count = Array.isArray(run.unknown_outcomes) ? run.unknown_outcomes.length : 0;
  if (count === 0) return [];
  return [el("span", { class: "badge unknown-outcome", "data-testid": "unknown-outcome", title: `${count} tool call(s) may or may not have taken effect`, text: "outcome unknown" })];
}
