import { createHash } from "node:crypto";
import { canonicalJson } from "../../vocabulary/canonical-json.js";

export { canonicalJson } from "../../vocabulary/canonical-json.js";

/**
 * The digest of tool-call arguments: sha256 hex of `canonicalJson(args)`. Stored with an approval
 * and checked before a tool runs, so that only the exact arguments a human approved execute, in
 * whatever key order they arrive.
 */
export function argsDigest(args: unknown): string {
  return createHash("sha256").update(canonicalJson(args)).digest("hex");
}
