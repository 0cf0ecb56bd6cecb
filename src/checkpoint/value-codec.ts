import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";

/** A serialized channel value or write, split for the `json text` / `bytes bytea` columns. */
export interface EncodedValue {
  type: string;
  json: string | null;
  bytes: Uint8Array | null;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Serializes `value` with the saver's serde. JSON output is kept as text (sent and read back
 * as-is, no hex encoding on the wire; PostgreSQL text cannot hold NUL, which JSON escapes);
 * anything else, or JSON that is not clean UTF-8, is kept as raw bytes.
 */
export async function encodeValue(serde: SerializerProtocol, value: unknown): Promise<EncodedValue> {
  const [type, data] = await serde.dumpsTyped(value);
  if (type === "json") {
    const text = asText(data as Uint8Array | string);
    if (text !== null) return { type, json: text, bytes: null };
  }
  return { type, json: null, bytes: typeof data === "string" ? new TextEncoder().encode(data) : data };
}

function asText(data: Uint8Array | string): string | null {
  let text: string;
  if (typeof data === "string") {
    text = data;
  } else {
    try {
      text = strictUtf8.decode(data);
    } catch {
      return null;
    }
  }
  return text.includes("\u0000") ? null : text;
}

/** Reverses `encodeValue` from a stored row. */
export async function decodeValue(serde: SerializerProtocol, type: string, json: string | null, bytes: Uint8Array | null): Promise<unknown> {
  if (json !== null) return serde.loadsTyped(type, json);
  // node-pg hands out Buffers; callers stored plain Uint8Arrays and get the same class back
  const plain = bytes === null ? new Uint8Array() : Buffer.isBuffer(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes;
  return serde.loadsTyped(type, plain);
}

/**
 * Metadata is stored as jsonb so `list({filter})` can use `@>`. jsonb rejects the `\u0000`
 * escape, so NUL characters inside metadata strings are dropped (as PostgresSaver does).
 */
export async function encodeMetadata(serde: SerializerProtocol, metadata: unknown): Promise<string> {
  const [, data] = await serde.dumpsTyped(metadata);
  const text = typeof data === "string" ? data : new TextDecoder().decode(data);
  return text.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, "$1");
}
