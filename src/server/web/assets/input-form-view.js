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
    // what was typed stays where the new form has the same field (the schema may arrive after the user began)
    const kept = new Map([...this.controls].map(([name, control]) => [`${name}\u0000${control.getAttribute("data-kind")}`, control instanceof HTMLInputElement && control.type === "checkbox" ? control.checked : control.value]));
    this.form = form;
    this.controls.clear();
    this.errors.clear();
    if (form.whole) {
      this.container.replaceChildren(this.fieldRow({ name: "", kind: "json", required: true, folded: false, description: null, options: [], objectOnly: false }, 0));
      this.restore(kept);
      return;
    }
    const rows = form.fields.map((field, index) => ({ field, row: this.fieldRow(field, index) }));
    const open = rows.filter((item) => !item.field.folded).map((item) => item.row);
    const folded = rows.filter((item) => item.field.folded).map((item) => item.row);
    this.restore(kept);
    this.container.replaceChildren(
      ...open,
      ...(folded.length === 0 ? [] : [el("details", { class: "more-fields", "data-testid": "more-fields" }, el("summary", { text: `More input fields (${folded.length})` }), ...folded)]),
    );
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
      const value = kept.get(`${name}\u0000${control.getAttribute("data-kind")}`);
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
