/**
 * The canonical JSON text of `value`: object keys sorted (by UTF-16 code units) at every depth,
 * no whitespace, arrays kept in order. Otherwise JSON.stringify's rules: `toJSON` is honoured
 * (dates become strings), object properties that are undefined, functions or symbols are dropped,
 * such array items become `null`, non-finite numbers become `null`, a top-level value with no
 * JSON form becomes `null`. Throws TypeError on cycles and BigInt, like JSON.stringify.
 *
 * Two values that mean the same JSON object give the same text whatever their key order.
 *
 * The one canonical JSON of devmind: approval digests (`argsDigest`, src/runtime/interrupts/digest.ts) and the
 * no-progress rule's call identity (`canonicalToolCallKey`, src/tools) both use it, so "the same
 * arguments" means one thing everywhere. It lives here, below both layers.
 */
export function canonicalJson(value: unknown): string {
  return write(value, new Set()) ?? "null";
}

function write(input: unknown, ancestors: Set<object>): string | undefined {
  let value = input;
  if (value !== null && (typeof value === "object" || typeof value === "bigint") && typeof (value as { toJSON?: unknown }).toJSON === "function") {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
    case "boolean":
      return JSON.stringify(value);
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : "null";
    case "bigint":
      throw new TypeError("canonicalJson: BigInt has no JSON form");
    case "object":
      break;
    default:
      return undefined;
  }
  const object = value as object;
  if (ancestors.has(object)) throw new TypeError("canonicalJson: cyclic structure");
  ancestors.add(object);
  try {
    if (Array.isArray(object)) {
      return `[${object.map((item) => write(item, ancestors) ?? "null").join(",")}]`;
    }
    const record = object as Record<string, unknown>;
    const parts: string[] = [];
    for (const key of Object.keys(record).sort()) {
      const text = write(record[key], ancestors);
      if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
    }
    return `{${parts.join(",")}}`;
  } finally {
    ancestors.delete(object);
  }
}
