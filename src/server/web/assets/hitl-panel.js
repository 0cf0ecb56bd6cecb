// The review panel: every interrupt in LangChain's human-in-the-loop shape, whichever graph raised
// it (devmind's agent, `createAgent`'s humanInTheLoopMiddleware, any graph raising that value),
// one card per action with the decisions its review config allows — approve, edit (a JSON editor
// of the arguments, checked before sending), reject (optional reason) and respond (a reply the
// model reads in place of the tool's result, sent as a reject with that message). Decisions go
// to `POST /runs/{id}/decisions` (CONTRACT section 5): an action that names its call is decided
// on its own; LangChain's middleware takes one decision per action, in order, sent together.

import { append, el, prettyJson } from "./dom.js";
import { decisionFor, reviewRequest } from "./hitl-shape.js";

/**
 * @typedef {import("./hitl-shape.js").ReviewAction} ReviewAction
 * @typedef {{ id: string, value: unknown }} ReviewInterrupt
 * @typedef {{ decisions: Record<string, unknown>[] }} DecisionsBody
 */

/** Renders the review cards into `container`; `send(body)` posts decisions and throws to show an error. */
export class HitlPanel {
  /**
   * @param {HTMLElement} container
   * @param {HTMLElement} panel  the section hidden when nothing waits
   * @param {(body: DecisionsBody) => Promise<void>} send
   */
  constructor(container, panel, send) {
    this.container = container;
    this.panel = panel;
    this.send = send;
    /** @type {Map<string, HTMLElement>} */
    this.groups = new Map();
  }

  /**
   * Shows exactly these interrupts, without the actions in `decided` (tool call ids decided one
   * by one); a group already shown is kept as it is, so an edit in progress survives.
   * @param {ReviewInterrupt[]} interrupts
   * @param {ReadonlySet<string>} [decided]
   */
  show(interrupts, decided = new Set()) {
    const wanted = new Set(interrupts.map((item) => item.id));
    for (const [id, group] of this.groups) {
      if (!wanted.has(id)) {
        group.remove();
        this.groups.delete(id);
      }
    }
    for (const item of interrupts) {
      if (!this.groups.has(item.id)) {
        const group = this.group(item);
        if (group === null) continue;
        this.groups.set(item.id, group);
        append(this.container, group);
      }
    }
    for (const card of this.container.querySelectorAll("[data-testid=approval][data-tool-call-id]")) {
      if (decided.has(card.getAttribute("data-tool-call-id") ?? "")) card.remove();
    }
    for (const [id, group] of this.groups) {
      if (group.querySelector("[data-testid=approval]") === null) {
        group.remove();
        this.groups.delete(id);
      }
    }
    this.panel.hidden = this.groups.size === 0;
  }

  clear() {
    this.show([]);
  }

  /**
   * The cards of one interrupt, or null when its value is not a review request.
   * @param {ReviewInterrupt} item
   * @returns {HTMLElement | null}
   */
  group(item) {
    const request = reviewRequest(item.value);
    if (request === null) return null;
    const together = !request.named && request.actions.length > 1;
    /** @type {(Record<string, unknown> | null)[]} */
    const chosen = request.actions.map(() => null);
    const error = el("p", { class: "error", role: "alert", "data-testid": "decisions-error" });
    const sendAll = el("button", { type: "button", class: "approve", "data-testid": "send-decisions", disabled: true, text: `Send ${request.actions.length} decisions` });
    const group = el("section", { class: "hitl", "data-testid": "hitl", "data-interrupt-id": item.id, "aria-label": `Review of ${request.actions.length} call(s)` });
    const cards = request.actions.map((action) =>
      this.card(action, async (decision, card) => {
        if (!together) {
          await this.send({ decisions: [decision] });
          return "sent";
        }
        chosen[action.index] = decision;
        card.dataset["chosen"] = String(decision["type"]);
        /** @type {HTMLButtonElement} */ (sendAll).disabled = chosen.some((value) => value === null);
        return "chosen";
      }),
    );
    append(group, ...cards);
    if (together) {
      sendAll.addEventListener("click", async () => {
        error.textContent = "";
        /** @type {HTMLButtonElement} */ (sendAll).disabled = true;
        try {
          await this.send({ decisions: /** @type {Record<string, unknown>[]} */ (chosen) });
          group.dataset["decided"] = "true";
        } catch (failure) {
          error.textContent = failure instanceof Error ? failure.message : String(failure);
          /** @type {HTMLButtonElement} */ (sendAll).disabled = false;
        }
      });
      append(group, el("p", { class: "muted", text: "This graph takes one decision per call, sent together." }), el("div", { class: "approval-buttons" }, sendAll), error);
    }
    return group;
  }

  /**
   * One action's card: what it is, its arguments, and the decisions its review config allows.
   * @param {ReviewAction} action
   * @param {(decision: Record<string, unknown>, card: HTMLElement) => Promise<"sent" | "chosen">} decide
   * @returns {HTMLElement}
   */
  card(action, decide) {
    const error = el("p", { class: "error", role: "alert", "data-testid": "approval-error" });
    const note = el("p", { class: "muted decision-note", "data-testid": "decision-note" });
    /** @type {HTMLButtonElement[]} */
    const buttons = [];
    /** @type {HTMLElement[]} */
    const areas = [];

    /** @param {() => Record<string, unknown> | null} build */
    const send = async (build) => {
      error.textContent = "";
      const decision = build();
      if (decision === null) return;
      for (const button of buttons) button.disabled = true;
      try {
        const outcome = await decide(decision, card);
        if (outcome === "sent") card.dataset["decided"] = String(decision["type"]);
        else {
          note.textContent = `Chosen: ${decision["type"] === "reject" && typeof decision["message"] === "string" ? `reject with "${decision["message"]}"` : decision["type"]}`;
          for (const button of buttons) button.disabled = false;
          for (const area of areas) area.hidden = true;
        }
      } catch (failure) {
        error.textContent = failure instanceof Error ? failure.message : String(failure);
        for (const button of buttons) button.disabled = false;
      }
    };

    /**
     * A button that opens a form area (closing the others), and the area's own send button.
     * @param {string} kind
     * @param {string} label
     * @param {string} sendLabel
     * @param {HTMLElement} field
     * @param {() => Record<string, unknown> | null} build
     * @param {() => void} [onOpen]
     */
    const opener = (kind, label, sendLabel, field, build, onOpen) => {
      const area = el("div", { class: `approval-${kind}`, hidden: true }, field);
      const button = el("button", { type: "button", class: kind === "respond" ? "reject" : kind, "data-testid": kind, "aria-expanded": "false", text: label });
      const confirm = el("button", { type: "button", class: `send-${kind}`, "data-testid": `send-${kind}`, text: sendLabel });
      button.addEventListener("click", () => {
        const opening = area.hidden;
        for (const other of areas) other.hidden = true;
        for (const other of buttons) if (other.hasAttribute("aria-expanded")) other.setAttribute("aria-expanded", "false");
        area.hidden = !opening;
        button.setAttribute("aria-expanded", String(opening));
        if (opening) {
          onOpen?.();
          field.focus();
        }
      });
      confirm.addEventListener("click", () => send(build));
      append(area, confirm);
      areas.push(area);
      buttons.push(/** @type {HTMLButtonElement} */ (button), /** @type {HTMLButtonElement} */ (confirm));
      return { button, area };
    };

    const row = el("div", { class: "approval-buttons" });
    const allowed = new Set(action.allowed);
    if (allowed.has("approve")) {
      const approve = el("button", { type: "button", class: "approve", "data-testid": "approve", text: "Approve" });
      approve.addEventListener("click", () => send(() => decisionFor(action, { type: "approve" })));
      buttons.push(/** @type {HTMLButtonElement} */ (approve));
      append(row, approve);
    }
    /** @type {HTMLElement[]} */
    const forms = [];
    if (allowed.has("edit")) {
      const editor = /** @type {HTMLTextAreaElement} */ (el("textarea", { class: "approval-editor", rows: "8", "aria-label": `Edited arguments for ${action.name}`, "data-testid": "edit-args" }));
      const { button, area } = opener("edit", "Edit", "Run with these arguments", editor, () => {
        const parsed = parseArgs(editor.value);
        if (typeof parsed === "string") {
          error.textContent = parsed;
          return null;
        }
        return decisionFor(action, { type: "edit", args: parsed });
      }, () => {
        editor.value = prettyJson(action.args);
      });
      append(row, button);
      forms.push(area);
    }
    if (allowed.has("reject")) {
      const reason = /** @type {HTMLInputElement} */ (el("input", { type: "text", class: "approval-reason", "aria-label": `Reason for rejecting ${action.name}`, "data-testid": "reject-reason", placeholder: "Reason (optional)" }));
      const rejecting = opener("reject", "Reject", "Send rejection", reason, () => decisionFor(action, { type: "reject", message: reason.value }));
      const reply = /** @type {HTMLTextAreaElement} */ (el("textarea", { class: "approval-reason", rows: "3", "aria-label": `Response instead of running ${action.name}`, "data-testid": "respond-text", placeholder: "What the model reads instead of the tool's result" }));
      const responding = opener("respond", "Respond", "Send response", reply, () => {
        if (reply.value.trim() === "") {
          error.textContent = "Write the response first: the model reads it instead of the tool's result.";
          return null;
        }
        return decisionFor(action, { type: "respond", message: reply.value });
      });
      append(row, rejecting.button, responding.button);
      forms.push(rejecting.area, responding.area);
    }

    const risk = action.risk ?? null;
    const card = el(
      "article",
      {
        class: `approval${risk === null ? "" : ` risk-${risk.replace(/[^a-z]/g, "")}`}`,
        "data-testid": "approval",
        "data-tool": action.name,
        "data-index": String(action.index),
        "data-tool-call-id": action.toolCallId ?? undefined,
        "data-allowed": action.allowed.join(" "),
        "aria-label": `Approval for ${action.name}`,
      },
      el("h3", {}, el("span", { class: "approval-tool", text: action.name }), risk === null ? null : el("span", { class: "risk", text: ` risk: ${risk}` })),
      action.description === null ? null : el("p", { class: "approval-description", text: action.description }),
      el("pre", { class: "approval-args", "data-testid": "approval-args", text: prettyJson(action.args) }),
      row,
      ...forms,
      note,
      error,
    );
    return card;
  }
}

/**
 * Parses edited arguments: must be a JSON object. Returns the object or an error message.
 * @param {string} text
 * @returns {Record<string, unknown> | string}
 */
export function parseArgs(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `The arguments are not valid JSON: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return "The arguments must be a JSON object, like {\"path\": \"notes.txt\"}.";
  return value;
}
