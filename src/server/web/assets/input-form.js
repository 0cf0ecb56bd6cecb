// The start form of a graph, from its input schema (`GET /assistants/{id}/schemas`:
// `input_schema`): which fields to show and how to read them into the run's input, checked before
// anything is sent. Pure (no DOM), so it is unit-tested in Node; input-form-view.js draws it.

/**
 * @typedef {"messages" | "string" | "number" | "integer" | "boolean" | "enum" | "strings" | "json" | "free"} FieldKind
 * @typedef {{ name: string, kind: FieldKind, required: boolean, folded: boolean, description: string | null, options: unknown[], objectOnly: boolean }} Field
 * @typedef {{ fields: Field[], whole: boolean }} InputForm  `whole`: no usable schema, one JSON editor for the whole input
 * @typedef {{ input: unknown, errors: { name: string, message: string }[] }} ReadResult
 */

/**
 * The schema's value type with a nullable wrapper (`anyOf`/`oneOf`/`type` list with `null`)
 * taken off; the schema itself otherwise.
 * @param {Record<string, any>} schema
 * @returns {Record<string, any>}
 */
function unwrapNullable(schema) {
  for (const key of ["anyOf", "oneOf"]) {
    const options = Array.isArray(schema[key]) ? schema[key].filter((/** @type {any} */ option) => option?.type !== "null") : null;
    if (options !== null && options.length === 1 && options[0] !== null && typeof options[0] === "object") return options[0];
  }
  if (Array.isArray(schema.type)) {
    const types = schema.type.filter((/** @type {unknown} */ type) => type !== "null");
    if (types.length === 1) return { ...schema, type: types[0] };
  }
  return schema;
}

/**
 * The kind of field a property gets: messages as a task box; strings, numbers, integers,
 * booleans, enums and lists of strings as their own controls; a property with no declared type
 * (an `Annotation` channel) as a free box (JSON, else text); anything else (objects, nested or
 * mixed types) as a JSON editor.
 * @param {string} name
 * @param {unknown} raw
 * @returns {{ kind: FieldKind, options: unknown[], objectOnly: boolean }}
 */
export function fieldKind(name, raw) {
  const schema = raw !== null && typeof raw === "object" ? unwrapNullable(/** @type {Record<string, any>} */ (raw)) : {};
  if (schema.langgraph_type === "messages" || name === "messages") return { kind: "messages", options: [], objectOnly: false };
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every((/** @type {unknown} */ v) => ["string", "number", "boolean"].includes(typeof v))) return { kind: "enum", options: schema.enum, objectOnly: false };
  const typed = Object.keys(schema).some((key) => !["description", "title", "default", "$schema"].includes(key));
  if (!typed) return { kind: "free", options: [], objectOnly: false };
  switch (schema.type) {
    case "string":
      return { kind: "string", options: [], objectOnly: false };
    case "number":
    case "integer":
    case "boolean":
      return { kind: schema.type, options: [], objectOnly: false };
    case "array":
      if (schema.items?.type === "string" && !Array.isArray(schema.items?.enum)) return { kind: "strings", options: [], objectOnly: false };
      return { kind: "json", options: [], objectOnly: false };
    default:
      return { kind: "json", options: [], objectOnly: schema.type === "object" };
  }
}

/**
 * The form of a graph's input schema: one field per property, in the schema's order (required
 * ones marked). A conversation graph whose other channels have no declared types (devmind's
 * agent: its run bookkeeping channels) gets those folded away. No properties: `whole`, one JSON
 * editor for the input.
 * @param {unknown} inputSchema
 * @returns {InputForm}
 */
export function inputForm(inputSchema) {
  const schema = /** @type {Record<string, any> | null} */ (inputSchema !== null && typeof inputSchema === "object" ? inputSchema : null);
  const properties = schema?.properties;
  if (properties === null || typeof properties !== "object" || Array.isArray(properties) || Object.keys(properties).length === 0) return { fields: [], whole: true };
  const required = new Set(Array.isArray(schema?.required) ? schema.required.map(String) : []);
  const fields = Object.entries(properties).map(([name, raw]) => {
    const { kind, options, objectOnly } = fieldKind(name, raw);
    const description = typeof raw?.description === "string" && raw.description !== "" ? raw.description : null;
    // without a required list, a conversation graph needs its task
    const needed = required.has(name) || (kind === "messages" && required.size === 0);
    return { name, kind, required: needed, folded: false, description: kind === "messages" ? null : description, options, objectOnly };
  });
  if (fields.some((field) => field.kind === "messages")) for (const field of fields) if (field.kind === "free" && !field.required) field.folded = true;
  return { fields, whole: false };
}

/**
 * Reads the form's raw values (text, or a boolean for a checkbox) into the run's input, checking
 * each field: a required field left empty, a number that is not one, JSON that does not parse.
 * Empty optional fields are left out.
 * @param {InputForm} form
 * @param {Map<string, string | boolean>} values  by field name (the whole input under "")
 * @returns {ReadResult}
 */
export function readInput(form, values) {
  /** @type {{ name: string, message: string }[]} */
  const errors = [];
  if (form.whole) {
    const text = String(values.get("") ?? "").trim();
    if (text === "") return { input: null, errors: [{ name: "", message: "Write the graph's input (JSON) first." }] };
    try {
      return { input: JSON.parse(text), errors };
    } catch {
      return { input: null, errors: [{ name: "", message: "The input is not valid JSON." }] };
    }
  }
  /** @type {Record<string, unknown>} */
  const input = {};
  for (const field of form.fields) {
    const raw = values.get(field.name);
    if (field.kind === "boolean") {
      input[field.name] = raw === true;
      continue;
    }
    const text = typeof raw === "string" ? raw.trim() : "";
    if (text === "") {
      if (field.required) errors.push({ name: field.name, message: field.kind === "messages" ? "Write a task first." : `${field.name} is required.` });
      continue;
    }
    const value = readValue(field, text);
    if ("error" in value) errors.push({ name: field.name, message: value.error });
    else input[field.name] = value.value;
  }
  return { input, errors };
}

/**
 * One field's value from its (non-empty) text.
 * @param {Field} field
 * @param {string} text
 * @returns {{ value: unknown } | { error: string }}
 */
function readValue(field, text) {
  switch (field.kind) {
    case "messages":
      return { value: [{ role: "user", content: text }] };
    case "number":
    case "integer": {
      const number = Number(text);
      if (!Number.isFinite(number)) return { error: `${field.name} must be a number.` };
      if (field.kind === "integer" && !Number.isInteger(number)) return { error: `${field.name} must be a whole number.` };
      return { value: number };
    }
    case "enum": {
      const option = field.options.find((item) => String(item) === text);
      return option === undefined ? { error: `${field.name} must be one of ${field.options.map(String).join(", ")}.` } : { value: option };
    }
    case "strings":
      return { value: text.split("\n").map((line) => line.trim()).filter((line) => line !== "") };
    case "json":
      try {
        const value = JSON.parse(text);
        if (field.objectOnly && (value === null || typeof value !== "object" || Array.isArray(value))) return { error: `${field.name} must be a JSON object.` };
        return { value };
      } catch {
        return { error: `${field.name} is not valid JSON.` };
      }
    case "free":
      try {
        return { value: JSON.parse(text) };
      } catch {
        return { value: text };
      }
    default:
      return { value: text };
  }
}
