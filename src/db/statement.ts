import { createHash } from "node:crypto";
import type { Statement } from "./types.js";

/**
 * Names a SQL text so PostgreSQL prepares it once per connection. The name is derived from the
 * text, so two savers on two schemas never collide on one connection.
 */
export function statement(label: string, text: string): Statement {
  const digest = createHash("sha1").update(text).digest("hex").slice(0, 12);
  return { name: `dm_${label}_${digest}`, text };
}
