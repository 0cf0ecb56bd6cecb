import { validateNamespace } from "@langchain/langgraph-checkpoint";
import { STORE_DEFAULTS } from "../constants.js";
import { StoreInputError } from "../errors.js";

/**
 * Checks of what a store operation carries, before any SQL: LangGraph's namespace rules (its
 * InvalidNamespaceError) plus devmind's bounds (STORE_DEFAULTS), the rest as StoreInputError.
 */

/** A namespace as LangGraph accepts it, within the depth and label-length bounds. */
export function checkNamespace(namespace: unknown, allowEmpty: boolean): string[] {
  if (!Array.isArray(namespace)) throw new StoreInputError("a namespace must be an array of labels");
  validateNamespace(namespace as string[], { allowEmpty, allowReservedRoot: true });
  if (namespace.length > STORE_DEFAULTS.maxNamespaceDepth) throw new StoreInputError(`a namespace has at most ${STORE_DEFAULTS.maxNamespaceDepth} labels`);
  if ((namespace as string[]).some((label) => label.length > STORE_DEFAULTS.maxKeyChars)) {
    throw new StoreInputError(`a namespace label has at most ${STORE_DEFAULTS.maxKeyChars} characters`);
  }
  return namespace as string[];
}

/** A key: a string without NUL, at most `maxKeyChars` long. */
export function checkKey(key: unknown): string {
  if (typeof key !== "string" || key.includes("\0") || key.length > STORE_DEFAULTS.maxKeyChars) {
    throw new StoreInputError(`a key must be a string of at most ${STORE_DEFAULTS.maxKeyChars} characters without NUL`);
  }
  return key;
}

/** A limit, offset or depth: a non-negative integer, `fallback` when absent. */
export function checkCount(value: unknown, name: string, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) throw new StoreInputError(`${name} must be a non-negative integer`);
  return value;
}

/** A value's JSON text: an object, no NUL character, at most `maxValueBytes`. */
export function valueJson(value: unknown): string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new StoreInputError("a stored value must be a JSON object");
  const json = JSON.stringify(value);
  // PostgreSQL's jsonb has no NUL character; refusing it here beats a driver error mid-batch
  if (/(^|[^\\])(\\\\)*\\u0000/.test(json)) throw new StoreInputError("a stored value cannot contain the NUL character (\\u0000)");
  if (Buffer.byteLength(json) > STORE_DEFAULTS.maxValueBytes) throw new StoreInputError(`a stored value is at most ${STORE_DEFAULTS.maxValueBytes} bytes of JSON`);
  return json;
}

/** A TTL in minutes (`undefined`: the fallback; `null`: none), or null for none. */
export function ttlMinutes(ttl: unknown, fallback: number | undefined): number | null {
  const chosen = ttl === undefined ? fallback : ttl;
  if (chosen === undefined || chosen === null) return null;
  if (typeof chosen !== "number" || !Number.isFinite(chosen) || chosen <= 0) throw new StoreInputError("a TTL must be a positive number of minutes");
  return chosen;
}
