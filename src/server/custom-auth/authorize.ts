import type { Context } from "hono";
import { AuthRefusalError, DevmindError } from "../../errors.js";
import type { AuthVariables } from "../auth.js";
import { compileFilter, forgesFilteredKey, type Containment } from "./auth-filter.js";
import type { AuthEvent } from "./auth-types.js";
import { callHandler } from "./handler-call.js";

/** What an authorization decided: the filter every read of the request applies (none: all), and the value as the handler left it. */
export interface Authorized<T> {
  filter: Containment | undefined;
  value: T;
}

/**
 * Asks the project's `on(...)` handlers about `event` with `value`, as the official server does:
 * the most specific handler wins (`resource:action`, then `resource`, then `*:action`, then `*`);
 * it may change `value` in place (e.g. add `metadata.owner`), return nothing or true (allowed,
 * no filter), false (403), or a filter (`compileFilter`; applied by every read in SQL). Its
 * HTTPException is the answer. Without a handler (API keys, or no auth) everything is allowed
 * unfiltered.
 */
export async function authorize<T>(c: Context<{ Variables: AuthVariables }>, event: AuthEvent, value: T): Promise<Authorized<T>> {
  const handlers = c.get("authHandler");
  const auth = c.get("auth");
  if (handlers === undefined || auth === undefined) return { filter: undefined, value };
  const [resource = "", action = ""] = event.split(":");
  const key = [event, resource, `*:${action}`, "*"].find((candidate) => handlers.callbacks[candidate] !== undefined);
  const handler = key === undefined ? undefined : handlers.callbacks[key];
  if (handler === undefined) return { filter: undefined, value };
  const result = await callHandler(`on(${JSON.stringify(key)}) for ${event}`, () => handler({ event, resource, action, value, permissions: auth.scopes, user: auth.user }), handlers.timeoutMs);
  if (result === undefined || result === null || result === true) return { filter: undefined, value };
  if (result === false) throw new AuthRefusalError(403, "Forbidden");
  if (typeof result !== "object") {
    throw new DevmindError("AUTH_HANDLER_FAILED", `Auth handler returned invalid result. Expected filter object, null, undefined or boolean. Got "${typeof result}" instead.`, { details: { event } });
  }
  return { filter: compileFilter(result, event), value };
}

/**
 * Refuses (403, nothing stored) a write whose metadata sets a key the filter constrains to
 * another value: a user cannot assign a thread, assistant or cron to someone else by sending
 * `metadata.owner` (or whatever the handler filters on).
 */
export function refuseForgedMetadata(metadata: Readonly<Record<string, unknown>> | null | undefined, filter: Containment | undefined): void {
  if (forgesFilteredKey(metadata, filter)) throw new AuthRefusalError(403, "Not authorized");
}
