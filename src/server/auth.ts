import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import type { ApiKeyEntry } from "../config.js";
import { SERVER_DEFAULTS } from "../constants.js";
import { httpError } from "./http-errors.js";
import type { AuthContext, CustomAuth } from "./custom-auth/auth-types.js";

/**
 * Context variables the gate sets: `principal`, the name of the caller's key or the identity the
 * project's auth handler returned; with a handler also `auth` (the user) and `authHandler` (its
 * `on(...)` handlers, for `authorize`). `localOwner`: the caller proved the server's local owner
 * key (`localOwnerGate`): no key or handler is asked, and `principal` is the name it gave;
 * `auditReason` the reason it gave for a resume run by `command.resume`.
 */
export type AuthVariables = { principal: string; auth?: AuthContext | undefined; authHandler?: CustomAuth | undefined; localOwner?: boolean | undefined; auditReason?: string | undefined };

/** The key a request presents: `x-api-key: KEY` or `Authorization: Bearer KEY`. */
export function presentedKey(headers: { get(name: string): string | null | undefined }): string | undefined {
  const direct = headers.get("x-api-key");
  if (typeof direct === "string" && direct !== "") return direct;
  const authorization = headers.get("authorization");
  const match = typeof authorization === "string" ? /^Bearer\s+(\S.*)$/i.exec(authorization.trim()) : null;
  return match?.[1]?.trim() || undefined;
}

const digest = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest();

/**
 * Finds the entry whose key equals `key`, comparing SHA-256 digests with `timingSafeEqual` against
 * every entry (no early exit), so timing reveals neither the key nor which entry matched.
 */
export function matchKey(entries: readonly ApiKeyEntry[], key: string): ApiKeyEntry | undefined {
  const presented = digest(key);
  let found: ApiKeyEntry | undefined;
  for (const entry of entries) {
    if (timingSafeEqual(presented, digest(entry.key)) && found === undefined) found = entry;
  }
  return found;
}

/**
 * Requires an API key on every route registered after it (CONTRACT section 8). With keys
 * configured: no key is 401 UNAUTHORIZED, an unknown key 403 FORBIDDEN, a known one sets
 * `principal` to the key's name (recorded on approvals). With no keys configured (only allowed
 * on a loopback host, see `startServer`) every request passes as SERVER_DEFAULTS.anonymousPrincipal.
 * CORS preflights (OPTIONS) are answered before this runs.
 */
export function requireApiKey(entries: readonly ApiKeyEntry[]): MiddlewareHandler<{ Variables: AuthVariables }> {
  return async (c, next) => {
    if (c.get("localOwner") === true) return next();
    if (entries.length === 0) {
      c.set("principal", SERVER_DEFAULTS.anonymousPrincipal);
      return next();
    }
    const key = presentedKey(c.req.raw.headers);
    if (key === undefined) throw httpError("UNAUTHORIZED", "an API key is required: send it as x-api-key or Authorization: Bearer");
    const entry = matchKey(entries, key);
    if (entry === undefined) throw httpError("FORBIDDEN", "the API key is not valid");
    c.set("principal", entry.name);
    return next();
  };
}
