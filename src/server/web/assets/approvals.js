// The pending-approval panel: one card per tool call waiting for a human, with approve, edit (a
// JSON editor of the arguments, checked before sending) and reject (with a reason). Decisions go
// out in CONTRACT section 5's shape, one per call, naming the call by tool_call_id.

import { append, el, prettyJson } from "./dom.js";

/**
 * @typedef {{ name: string, args: Record<string, unknown>, description?: string, tool_call_id: string, risk?: string }} ActionRequest
 * @typedef {{ type: "approve", tool_call_id: string } | { type: "edit", tool_call_id: string, editedAction: { name: string, args: Record<string, unknown> } } | { type: "reject", tool_call_id: string, message?: string }} Decision
 */

/** Renders pending requests into `container` and sends decisions through `decide`. */
export class ApprovalPanel {
  /**
   * @param {HTMLElement} container
   * @param {(decision: Decision) => Promise<void>} decide  posts the decision; throws to show an error
   */
  constructor(container, decide) {
    this.container = container;
    this.decide = decide;
    /** @type {Map<string, HTMLElement>} */
    this.cards = new Map();
  }

  /**
   * Shows exactly these requests (keeping cards that are already open, so an edit in progress survives).
   * @param {ActionRequest[]} requests
   */
  show(requests) {
    const wanted = new Set(requests.map((r) => r.tool_call_id));
    for (const [id, card] of this.cards) {
      if (!wanted.has(id)) {
        card.remove();
        this.cards.delete(id);
      }
    }
    for (const request of requests) {
      if (!this.cards.has(request.tool_call_id)) {
        const card = this.card(request);
        this.cards.set(request.tool_call_id, card);
        append(this.container, card);
      }
    }
    this.container.hidden = this.cards.size === 0;
  }

  clear() {
    this.show([]);
  }

  /**
   * @param {ActionRequest} request
   * @returns {HTMLElement}
   */
  card(request) {
    const error = el("p", { class: "error", role: "alert", "data-testid": "approval-error" });
    const argsView = el("pre", { class: "approval-args", "data-testid": "approval-args", text: prettyJson(request.args) });
    const editor = el("textarea", { class: "approval-editor", rows: "8", "aria-label": `Edited arguments for ${request.name}`, "data-testid": "edit-args" });
    const reason = el("input", { type: "text", class: "approval-reason", "aria-label": `Reason for rejecting ${request.name}`, "data-testid": "reject-reason", placeholder: "Reason (optional)" });
    const editArea = el("div", { class: "approval-edit", hidden: true }, editor);
    const rejectArea = el("div", { class: "approval-reject", hidden: true }, reason);
    /** @type {HTMLButtonElement[]} */
    const buttons = [];

    /** @param {() => Decision | null} build */
    const send = async (build) => {
      error.textContent = "";
      const decision = build();
      if (decision === null) return;
      for (const button of buttons) button.disabled = true;
      try {
        await this.decide(decision);
        card.dataset["decided"] = decision.type;
      } catch (failure) {
        error.textContent = failure instanceof Error ? failure.message : String(failure);
        for (const button of buttons) button.disabled = false;
      }
    };

    const approve = el("button", { type: "button", class: "approve", "data-testid": "approve" }, "Approve");
    approve.addEventListener("click", () => send(() => ({ type: "approve", tool_call_id: request.tool_call_id })));

    const edit = el("button", { type: "button", class: "edit", "data-testid": "edit", "aria-expanded": "false" }, "Edit");
    const sendEdit = el("button", { type: "button", class: "send-edit", "data-testid": "send-edit" }, "Run with these arguments");
    edit.addEventListener("click", () => {
      editArea.hidden = !editArea.hidden;
      edit.setAttribute("aria-expanded", String(!editArea.hidden));
      if (!editArea.hidden) {
        /** @type {HTMLTextAreaElement} */ (editor).value = prettyJson(request.args);
        editor.focus();
      }
    });
    sendEdit.addEventListener("click", () =>
      send(() => {
        const parsed = parseArgs(/** @type {HTMLTextAreaElement} */ (editor).value);
        if (typeof parsed === "string") {
          error.textContent = parsed;
          return null;
        }
        return { type: "edit", tool_call_id: request.tool_call_id, editedAction: { name: request.name, args: parsed } };
      }),
    );
    append(editArea, sendEdit);

    const reject = el("button", { type: "button", class: "reject", "data-testid": "reject", "aria-expanded": "false" }, "Reject");
    const sendReject = el("button", { type: "button", class: "send-reject", "data-testid": "send-reject" }, "Send rejection");
    reject.addEventListener("click", () => {
      rejectArea.hidden = !rejectArea.hidden;
      reject.setAttribute("aria-expanded", String(!rejectArea.hidden));
      if (!rejectArea.hidden) reason.focus();
    });
    sendReject.addEventListener("click", () =>
      send(() => {
        const message = /** @type {HTMLInputElement} */ (reason).value.trim();
        return message === "" ? { type: "reject", tool_call_id: request.tool_call_id } : { type: "reject", tool_call_id: request.tool_call_id, message };
      }),
    );
    append(rejectArea, sendReject);
    buttons.push(
      /** @type {HTMLButtonElement} */ (approve),
      /** @type {HTMLButtonElement} */ (edit),
      /** @type {HTMLButtonElement} */ (sendEdit),
      /** @type {HTMLButtonElement} */ (reject),
      /** @type {HTMLButtonElement} */ (sendReject),
    );

    const risk = typeof request.risk === "string" ? request.risk : "unknown";
    const card = el(
      "article",
      { class: `approval risk-${risk.replace(/[^a-z]/g, "")}`, "data-testid": "approval", "data-tool": request.name, "data-tool-call-id": request.tool_call_id, "aria-label": `Approval for ${request.name}` },
      el("h3", {}, el("span", { class: "approval-tool", text: request.name }), el("span", { class: "risk", text: ` risk: ${risk}` })),
      request.description ? el("p", { class: "approval-description", text: request.description }) : null,
      argsView,
      el("div", { class: "approval-buttons" }, approve, edit, reject),
      editArea,
      rejectArea,
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
