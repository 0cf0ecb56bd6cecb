// Draws a graph's start form (input-form.js) in the task form: a control per input field,
// labelled by the field's name, or one JSON editor for the whole input when the graph's schema
// gives no fields. Values and names are text only (textContent, attributes).

import { el } from "./dom.js";
import { readInput } from "./input-form.js";

/** @typedef {import("./input-form.js").InputForm} InputForm @typedef {import("./input-form.js").Field} Field */

const PLACEHOLDER = { messages: "What should it do?", string: "", number: "a number", integer: "a whole number", strings: "one per line", json: "JSON", free: "JSON, or plain text" };

/** The start form's fields, drawn into a container. */
export class InputFormView {
  /** @param {HTMLElement} container */
  constructor(container) {
    this.container = container;
    /** @type {InputForm} */
    this.form = { fields: [], whole: true };
    /** @type {Map<string, HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>} */
    this.controls = new Map();
    /** @type {Map<string, HTMLElement>} */
    this.errors = new Map();
  }

  /**
   * Shows `form` (the graph's fields, or the whole-input JSON editor).
   * @param {InputForm} form
   */
  show(form) {
    // the same fields again (a graph's schema that says what the first form said): nothing to redraw
    if (JSON.stringify(form) === JSON.stringify(this.form) && this.controls.size > 0) {
      this.form = form;
      return;
    }
    // what was typed stays where the new form has the same field (the schema may arrive after the user began)
    const kept = new Map([...this.controls].map(([name, control]) => [keyOf(name, control), control instanceof HTMLInputElement && control.type === "checkbox" ? control.checked : control.value]));
    // so does the caret: the user (or a browser's input) typing into a field while it is redrawn goes on typing into the new one
    const focused = [...this.controls].find(([, control]) => control === document.activeElement);
    const caret = focused === undefined ? undefined : { key: keyOf(focused[0], focused[1]), ...selectionOf(focused[1]) };
    this.form = form;
    this.controls.clear();
    this.errors.clear();
    if (form.whole) {
      this.container.replaceChildren(this.fieldRow({ name: "", kind: "json", required: true, folded: false, description: null, options: [], objectOnly: false }, 0));
    } else {
      const rows = form.fields.map((field, index) => ({ field, row: this.fieldRow(field, index) }));
      const open = rows.filter((item) => !item.field.folded).map((item) => item.row);
      const folded = rows.filter((item) => item.field.folded).map((item) => item.row);
      this.container.replaceChildren(
        ...open,
        ...(folded.length === 0 ? [] : [el("details", { class: "more-fields", "data-testid": "more-fields" }, el("summary", { text: `More input fields (${folded.length})` }), ...folded)]),
      );
    }
    this.restore(kept);
    if (caret !== undefined) this.refocus(caret);
  }

  /**
   * Focuses the new control of a field that had the focus, with its selection where it was.
   * @param {{ key: string, start: number | null, end: number | null }} caret
   */
  refocus(caret) {
    const match = [...this.controls].find(([name, control]) => keyOf(name, control) === caret.key);
    if (match === undefined) return;
    const control = match[1];
    const details = control.closest("details");
    if (details instanceof HTMLDetailsElement) details.open = true;
    control.focus();
    if (caret.start !== null && caret.end !== null && "setSelectionRange" in control) {
      try {
        control.setSelectionRange(caret.start, caret.end);
      } catch {
        // a control without a text selection (a number input): the focus is enough
      }
    }
  }

  /**
   * One labelled control with its description and its error line.
   * @param {Field} field
   * @param {number} index
   * @returns {HTMLElement}
   */
  fieldRow(field, index) {
    // the task box and the whole-input editor keep the id `task` (the page's main box)
    const id = field.kind === "messages" || field.name === "" ? "task" : `field-${index}`;
    const label = field.name === "" ? "Input (JSON)" : field.kind === "messages" ? "Task" : field.name;
    /** @type {HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement} */
    let control;
    const common = { id, name: field.name, "data-testid": "input-field", "data-field": field.name, "data-kind": field.kind, "aria-required": field.required ? "true" : "false" };
    if (field.kind === "boolean") control = /** @type {HTMLInputElement} */ (el("input", { ...common, type: "checkbox" }));
    else if (field.kind === "enum")
      control = /** @type {HTMLSelectElement} */ (
        el("select", common, ...(field.required ? [] : [el("option", { value: "", text: "—" })]), ...field.options.map((option) => el("option", { value: String(option), text: String(option) })))
      );
    else if (field.kind === "messages" || field.kind === "json" || field.kind === "strings")
      control = /** @type {HTMLTextAreaElement} */ (el("textarea", { ...common, rows: field.kind === "strings" ? 3 : field.name === "" ? 4 : 3, spellcheck: field.kind === "json" ? "false" : undefined, placeholder: field.name === "" ? '{"topic": "..."}' : PLACEHOLDER[field.kind] }));
    else control = /** @type {HTMLInputElement} */ (el("input", { ...common, type: "text", inputmode: field.kind === "number" || field.kind === "integer" ? "decimal" : undefined, placeholder: PLACEHOLDER[field.kind] || undefined, autocomplete: "off" }));
    this.controls.set(field.name, control);
    // a corrected field's error goes once it is edited
    control.addEventListener(field.kind === "boolean" || field.kind === "enum" ? "change" : "input", () => {
      error.textContent = "";
      control.setAttribute("aria-invalid", "false");
    });
    const error = el("p", { class: "error field-error", "data-testid": "field-error", "data-field": field.name, role: "alert" });
    this.errors.set(field.name, error);
    const hint = field.description ?? (field.kind === "free" ? "no declared type: JSON, or plain text" : field.kind === "strings" ? "a list: one item per line" : field.kind === "json" && field.name !== "" ? "JSON" : null);
    return el(
      "div",
      { class: `input-row kind-${field.kind}`, "data-field": field.name },
      el("label", { for: id, id: field.kind === "messages" || field.name === "" ? "task-label" : undefined, class: "input-label" }, label, field.required && field.kind !== "messages" && field.name !== "" ? el("span", { class: "required", "aria-hidden": "true", text: " *" }) : null),
      control,
      hint === null ? null : el("span", { class: "input-hint", text: hint }),
      error,
    );
  }

  /**
   * Reads and checks the form: the run's input, or the errors (each shown under its field, the
   * first field in error focused).
   * @returns {import("./input-form.js").ReadResult}
   */
  read() {
    /** @type {Map<string, string | boolean>} */
    const values = new Map();
    for (const [name, control] of this.controls) values.set(name, control instanceof HTMLInputElement && control.type === "checkbox" ? control.checked : control.value);
    const result = readInput(this.form, values);
    for (const [name, line] of this.errors) {
      const error = result.errors.find((item) => item.name === name);
      line.textContent = error?.message ?? "";
      this.controls.get(name)?.setAttribute("aria-invalid", error === undefined ? "false" : "true");
    }
    const first = result.errors[0];
    if (first !== undefined) {
      const control = this.controls.get(first.name);
      if (control?.closest("details") instanceof HTMLDetailsElement) /** @type {HTMLDetailsElement} */ (control.closest("details")).open = true;
      control?.focus();
    }
    return result;
  }

  /**
   * Puts values back into the controls of the same name and kind.
   * @param {Map<string, string | boolean>} kept  by `name NUL kind`
   */
  restore(kept) {
    for (const [name, control] of this.controls) {
      const value = kept.get(keyOf(name, control));
      if (value === undefined) continue;
      if (control instanceof HTMLInputElement && control.type === "checkbox") control.checked = value === true;
      else control.value = String(value);
    }
  }

  /** Empties every field (after a run started). */
  clear() {
    for (const control of this.controls.values()) {
      if (control instanceof HTMLInputElement && control.type === "checkbox") control.checked = false;
      else if (control instanceof HTMLSelectElement) control.selectedIndex = 0;
      else control.value = "";
    }
  }
}

/**
 * A field's identity across redraws: its name and kind.
 * @param {string} name
 * @param {Element} control
 * @returns {string}
 */
function keyOf(name, control) {
  return `${name}\u0000${control.getAttribute("data-kind")}`;
}

/**
 * Where a text control's selection is (null for controls without one).
 * @param {HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement} control
 * @returns {{ start: number | null, end: number | null }}
 */
function selectionOf(control) {
  if (control instanceof HTMLSelectElement) return { start: null, end: null };
  try {
    return { start: control.selectionStart, end: control.selectionEnd };
  } catch {
    return { start: null, end: null };
  }
}
