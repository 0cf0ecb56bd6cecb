import type { MiddlewareHandler } from "hono";
import { DevmindError } from "../../errors.js";
import type { AuthVariables } from "../auth.js";
import type { AuthContext, CustomAuth } from "./auth-types.js";
import { callHandler } from "./handler-call.js";

/**
 * Runs the project's `authenticate` on a request and normalises its answer as the official
 * server does: a string is the identity; an object needs a string `identity`, its `permissions`
 * (an array, else none) become the scopes, `display_name` defaults to the identity and
 * `is_authenticated` to true. Anything else is AUTH_HANDLER_FAILED (500); its HTTPException is
 * the answer (`callHandler`). Without an `authenticate` every request is refused 401: a handler
 * with filters but no way to tell users apart must not serve everyone as one user.
 */
export async function authenticateRequest(auth: CustomAuth, request: Request): Promise<AuthContext> {
  const authenticate = auth.authenticate;
  if (authenticate === undefined) throw new DevmindError("UNAUTHORIZED", `the auth handler ${auth.source} has no authenticate()`);
  const answer = await callHandler("authenticate", () => authenticate(request), auth.timeoutMs);
  if (typeof answer === "string" && answer !== "") {
    return { scopes: [], user: { identity: answer, permissions: [], display_name: answer, is_authenticated: true } };
  }
  if (typeof answer === "object" && answer !== null && typeof (answer as { identity?: unknown }).identity === "string" && (answer as { identity: string }).identity !== "") {
    const user = answer as Record<string, unknown> & { identity: string };
    const scopes = Array.isArray(user["permissions"]) ? (user["permissions"] as unknown[]).filter((scope): scope is string => typeof scope === "string") : [];
    return {
      scopes,
      user: {
        ...user,
        identity: user.identity,
        permissions: scopes,
        is_authenticated: typeof user["is_authenticated"] === "boolean" ? user["is_authenticated"] : true,
        display_name: typeof user["display_name"] === "string" ? user["display_name"] : user.identity,
      },
    };
  }
  throw new DevmindError("AUTH_HANDLER_FAILED", "the auth handler's authenticate returned neither a non-empty string nor an object with a string identity");
}

/**
 * The gate of every API request when langgraph.json names an auth handler (instead of the API key
 * check): `authenticate` runs on the request; the user becomes `auth` (for `authorize` and the
 * runs' `langgraph_auth_user`) and its identity the `principal` (recorded on runs, decisions and
 * resumes). DEVMIND_API_KEYS are not consulted: the handler decides who may call.
 */
export function requireAuthenticatedUser(auth: CustomAuth): MiddlewareHandler<{ Variables: AuthVariables }> {
  return async (c, next) => {
    // the project's http app sits behind the same gate: a request it passed on is not authenticated twice;
    // the local owner (localOwnerGate) has the trust of direct database access: the handler is not asked
    if (c.get("auth") !== undefined || c.get("localOwner") === true) return next();
    const context = await authenticateRequest(auth, c.req.raw);
    c.set("auth", context);
    c.set("authHandler", auth);
    c.set("principal", context.user.identity);
    return next();
  };
}
