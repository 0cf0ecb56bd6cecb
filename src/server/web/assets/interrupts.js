// The interrupt panel of a run: each interrupt still waiting that is not a human-in-the-loop
// review (those get hitl-panel.js), its value shown as a readable tree, and a box to resume it
// with a JSON value (sent as LangGraph's `command.resume`, keyed by the interrupt's id so several
// interrupts can be answered one at a time).

import { append, el } from "./dom.js";
import { jsonTree } from "./json-tree.js";

/** @typedef {{ id: string, value: unknown, ns?: string[] }} RunInterrupt */

/** Renders waiting interrupts into `container`; `resume(id, value)` sends one answer. */
export class InterruptPanel {
  /**
   * @param {HTMLElement} container
   * @param {HTMLElement} panel  the section to hide when nothing waits
   * @param {(interruptId: string, value: unknown) => Promise<void>} resume  throws to show an error
   */
  constructor(container, panel, resume) {
    this.container = container;
    this.panel = panel;
    this.resume = resume;
    /** @type {Map<string, HTMLElement>} */
    this.cards = new Map();
  }

  /**
   * Shows exactly these interrupts (a card being edited is kept).
   * @param {RunInterrupt[]} interrupts
   */
  show(interrupts) {
    const wanted = new Set(interrupts.map((item) => item.id));
    for (const [id, card] of this.cards) {
      if (!wanted.has(id)) {
        card.remove();
        this.cards.delete(id);
      }
    }
    for (const item of interrupts) {
      if (this.cards.has(item.id)) continue;
      const card = this.card(item);
      this.cards.set(item.id, card);
      append(this.container, card);
    }
    this.panel.hidden = this.cards.size === 0;
  }

  /**
   * @param {RunInterrupt} item
   * @returns {HTMLElement}
   */
  card(item) {
    const error = el("p", { class: "error", role: "alert", "data-testid": "resume-error" });
    const box = el("textarea", { class: "resume-value", rows: "4", "aria-label": "Resume value (JSON)", "data-testid": "resume-value", placeholder: '{"approved": true}' });
    const send = el("button", { type: "button", class: "approve", "data-testid": "resume-button", text: "Resume" });
    send.addEventListener("click", () => {
      const text = /** @type {HTMLTextAreaElement} */ (box).value.trim();
      let value;
      try {
        value = JSON.parse(text === "" ? "null" : text);
      } catch {
        error.textContent = "The resume value is not valid JSON.";
        return;
      }
      error.textContent = "";
      /** @type {HTMLButtonElement} */ (send).disabled = true;
      this.resume(item.id, value).then(
        () => undefined,
        (/** @type {unknown} */ failure) => {
          error.textContent = failure instanceof Error ? failure.message : String(failure);
          /** @type {HTMLButtonElement} */ (send).disabled = false;
        },
      );
    });
    return el(
      "div",
      { class: "interrupt", "data-testid": "interrupt", "data-interrupt-id": item.id },
      el("div", { class: "interrupt-value" }, jsonTree(item.value, { testId: "interrupt-value", openDepth: 3 })),
      box,
      el("div", { class: "approval-buttons" }, send),
      error,
    );
  }
}
