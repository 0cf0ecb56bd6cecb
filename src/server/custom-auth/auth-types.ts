/**
 * The shapes of LangGraph's custom auth (`auth` in langgraph.json, an `Auth` object of
 * `@langchain/langgraph-sdk/auth`) as devmind's server uses them. Read from the object's
 * `~handlerCache`, as the official server does, so any copy of the SDK works.
 */

/** The user `authenticate` returned, normalised as the official server does. */
export interface AuthUser {
  identity: string;
  permissions: string[];
  display_name: string;
  is_authenticated: boolean;
  [key: string]: unknown;
}

/** Who a request is: the user and its permissions (the official server's `scopes`). */
export interface AuthContext {
  user: AuthUser;
  scopes: string[];
}

/** What an `on(...)` handler is called with. */
export interface AuthCallbackParams {
  event: string;
  resource: string;
  action: string;
  value: unknown;
  permissions: string[];
  user: AuthUser;
}

/** An `on(...)` handler: returns nothing/true (allowed), false (403), a filter object, or throws. */
export type AuthCallback = (params: AuthCallbackParams) => unknown;

/** A loaded auth handler: `authenticate` and the `on(...)` callbacks by event key. */
export interface CustomAuth {
  /** `./auth.ts:auth` as written in langgraph.json, for messages. */
  source: string;
  authenticate: ((request: Request) => unknown) | undefined;
  /** By `resource:action`, `resource`, `*:action` or `*`. */
  callbacks: Readonly<Record<string, AuthCallback>>;
  /** How long one call of a handler may take before the request fails (DEVMIND_AUTH_TIMEOUT_MS). */
  timeoutMs: number;
}

/** The resources `on(...)` handlers guard, as LangGraph names them. */
export type AuthResource = "threads" | "assistants" | "crons" | "store";

/** `resource:action` of an authorization, e.g. `threads:read`. */
export type AuthEvent =
  | "threads:create"
  | "threads:read"
  | "threads:update"
  | "threads:delete"
  | "threads:search"
  | "threads:create_run"
  | "assistants:create"
  | "assistants:read"
  | "assistants:update"
  | "assistants:delete"
  | "assistants:search"
  | "crons:create"
  | "crons:read"
  | "crons:update"
  | "crons:delete"
  | "crons:search"
  | "store:put"
  | "store:get"
  | "store:search"
  | "store:list_namespaces"
  | "store:delete";
