import { AUTH_DEFAULTS } from "../../constants.js";
import { DevmindError } from "../../errors.js";
import type { AccessFilter } from "../../vocabulary/access-filter.js";

/**
 * A handler's filter as one JSON containment object: every read applies it in SQL as
 * `metadata @> $filter::jsonb`. `{k: v}` and `{k: {$eq: v}}` become `{k: v}` (the key equals v);
 * `{k: {$contains: v}}` becomes `{k: [v]}` and `{k: {$contains: [a, b]}}` `{k: [a, b]}` (the key is
 * an array holding them all) — the official server's `isAuthMatching` semantics, in the database.
 */
export type Containment = AccessFilter;

type Scalar = string | number | boolean;
const isScalar = (value: unknown): value is Scalar => typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value));

/**
 * Checks and compiles what an `on(...)` handler returned as a filter (see `Containment`). Anything
 * else — a key with an object value other than exactly `{$eq: scalar}` or `{$contains: scalar |
 * scalar[]}`, null, nested objects, too many keys — is AUTH_HANDLER_FAILED naming the event and
 * the key: a malformed filter never widens what a user sees, the request fails (500).
 */
export function compileFilter(raw: object, event: string): Containment {
  const malformed = (why: string): DevmindError =>
    new DevmindError("AUTH_HANDLER_FAILED", `the auth handler for ${event} returned a malformed filter: ${why} (expected {key: value}, {key: {$eq: value}} or {key: {$contains: value | [values]}})`, { details: { event } });
  if (Array.isArray(raw)) throw malformed("an array");
  const entries = Object.entries(raw);
  if (entries.length > AUTH_DEFAULTS.filterMaxKeys) throw malformed(`more than ${AUTH_DEFAULTS.filterMaxKeys} keys`);
  const compiled: Record<string, unknown> = {};
  for (const [key, value] of entries) {
    const where = `key ${JSON.stringify(key.slice(0, 100))}`;
    if (isScalar(value)) {
      compiled[key] = value;
      continue;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw malformed(`${where} has ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}`);
    const operators = Object.keys(value);
    const operand = (value as Record<string, unknown>)[operators[0] ?? ""];
    if (operators.length === 1 && operators[0] === "$eq" && isScalar(operand)) {
      compiled[key] = operand;
    } else if (operators.length === 1 && operators[0] === "$contains" && isScalar(operand)) {
      compiled[key] = [operand];
    } else if (operators.length === 1 && operators[0] === "$contains" && Array.isArray(operand) && operand.every(isScalar)) {
      compiled[key] = [...operand];
    } else {
      throw malformed(`${where} has ${JSON.stringify(value).slice(0, 200)}`);
    }
  }
  return compiled;
}

/**
 * Whether `metadata` satisfies `filter` (JSON containment, see `Containment`); true without a
 * filter. Used where no row is read: a value about to be written (forged owner metadata) and a
 * store key not yet stored.
 */
export function matchesFilter(metadata: Readonly<Record<string, unknown>> | null | undefined, filter: Containment | undefined): boolean {
  if (filter === undefined) return true;
  for (const [key, wanted] of Object.entries(filter)) {
    const actual = metadata?.[key];
    if (Array.isArray(wanted)) {
      if (!Array.isArray(actual) || !wanted.every((item) => actual.includes(item))) return false;
    } else if (actual !== wanted) {
      return false;
    }
  }
  return true;
}

/**
 * Whether a write of `metadata` (a create's, or the keys an update sets) would name someone else:
 * a key the filter constrains is set to a value the filter refuses. A key the write leaves out is
 * not a forgery (the official semantics: the resource simply lacks it).
 */
export function forgesFilteredKey(metadata: Readonly<Record<string, unknown>> | null | undefined, filter: Containment | undefined): boolean {
  if (filter === undefined || metadata === null || metadata === undefined) return false;
  return Object.keys(filter).some((key) => key in metadata && !matchesFilter({ [key]: metadata[key] }, { [key]: filter[key] }));
}
