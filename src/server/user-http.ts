import { Hono, type Context, type Next } from "hono";
import type { cors as honoCors } from "hono/cors";
import type { ApiKeyEntry } from "../config.js";
import { ConfigError } from "../errors.js";
import type { HttpSettings, ModuleReference, RouteGroup } from "../graphs/langgraph-http.js";
import { requireApiKey, type AuthVariables } from "./auth.js";
import { rememberCallerKeys } from "./loopback-fetch.js";
import type { CustomAuth } from "./custom-auth/auth-types.js";
import { requireAuthenticatedUser } from "./custom-auth/authenticate.js";
import { rejectForeignBrowserRequests } from "./web/browser-guard.js";
import { WEB_ASSET_FILES } from "./web/web-assets.js";

/** A Hono app as `http.app` exports it (any copy of Hono: the project's own, not necessarily devmind's). */
export interface UserHonoApp {
  fetch(request: Request, ...rest: unknown[]): Response | Promise<Response>;
  routes: unknown[];
}

/** What `devmind serve` mounts of a project's `http` section: its settings and the loaded `http.app`, if any. */
export interface UserHttp {
  settings: HttpSettings;
  app: UserHonoApp | null;
}

function isHonoApp(value: unknown): value is UserHonoApp {
  return value !== null && typeof value === "object" && typeof (value as UserHonoApp).fetch === "function" && Array.isArray((value as UserHonoApp).routes);
}

/**
 * Loads `http.app` (through the same loader as the graphs: TypeScript via tsx) and checks that the
 * export is a Hono app. A missing file, a module that fails, a missing export or anything else
 * than a Hono app is a ConfigError naming `http.app` and the file (exit 2).
 */
export async function loadUserHttp(settings: HttpSettings): Promise<UserHttp> {
  return { settings, app: settings.app === null ? null : await loadHonoApp(settings.app) };
}

async function loadHonoApp(reference: ModuleReference): Promise<UserHonoApp> {
  const { importGraphModule } = await import("../graphs/load-graphs.js");
  const where = `http.app (${reference.file})`;
  let module: Record<string, unknown>;
  try {
    module = await importGraphModule(reference.file);
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    throw new ConfigError(`${where}: the module failed to load: ${(text.split("\n")[0] ?? "").slice(0, 500)}`, { key: "http.app", file: reference.file });
  }
  const app = module[reference.exportName];
  if (app === undefined) throw new ConfigError(`${where}: no export named ${reference.exportName}`, { key: "http.app", file: reference.file });
  if (!isHonoApp(app)) throw new ConfigError(`${where}: the export ${reference.exportName} is not a Hono app (expected \`export const ${reference.exportName} = new Hono()\`)`, { key: "http.app", file: reference.file });
  return app;
}

/** Paths answered without an API key: devmind's open routes and the generative UI's assets (as LangGraph's auth skips them). */
function isOpenRequest(c: Context): boolean {
  const method = c.req.method;
  if (method !== "GET" && method !== "HEAD") return false;
  const path = c.req.path;
  return path === "/ok" || path === "/info" || path.startsWith("/ui/") || OPEN_WEB_PATHS.has(path);
}

const OPEN_WEB_PATHS = new Set<string>(WEB_ASSET_FILES.map((asset) => asset.path));

/** The paths of each route group LangGraph's server lets `http.disable_*` take away. */
const GROUP_PATHS: Record<RouteGroup, RegExp> = {
  assistants: /^\/assistants(\/|$)/,
  runs: /^\/runs(\/|$)|^\/threads\/[^/]+\/(runs|stream|commands)(\/|$)/,
  threads: /^\/threads(\/|$)/,
  store: /^\/store(\/|$)/,
  meta: /^\/(info|ok)$/,
  ui: /^\/ui(\/|$)/,
};

/**
 * Mounts a project's `http` section on devmind's app, where LangGraph JS's server puts it: after
 * CORS and before every route of devmind's own. Call it where the open routes would come next.
 *
 * - The key headers of each request are remembered while it is served: `new Client()` in the
 *   user's code calls this server in-process as the same caller (see `bindLoopbackFetch`).
 * - The API key check (and, without keys, the foreign-browser guard) runs first for every request
 *   but the open ones (`GET /ok`, `/info`, the web page, `/ui/*`): the user's routes and
 *   middleware are behind the same key as devmind's routes, and run after it, as behind
 *   LangGraph's auth.
 * - Then the user's app: its middleware runs before devmind's routes (it may add headers, change
 *   the request, e.g. the JSON body devmind's routes read next, or answer itself), and its routes
 *   come first, so a user route shadows devmind's on the same path. An error its code throws that
 *   carries a response (Hono's `HTTPException`, of any copy of Hono) answers with that response;
 *   any other is devmind's 500.
 * - Then the groups `http.disable_*` took away answer 404 (unless the user's app served them).
 */
export function mountUserHttp(app: Hono<{ Variables: AuthVariables }>, http: UserHttp, apiKeys: readonly ApiKeyEntry[], auth?: CustomAuth): void {
  const guard = rejectForeignBrowserRequests(apiKeys);
  const keyCheck = requireApiKey(apiKeys);
  const authenticate = auth === undefined ? undefined : requireAuthenticatedUser(auth);
  app.use("*", rememberCallerKeys());
  app.use("*", async (c, next) => {
    if (isOpenRequest(c) || c.get("localOwner") === true) return next();
    if (authenticate !== undefined) {
      await authenticate(c, next);
      return;
    }
    await guard(c, async () => {
      await keyCheck(c, next);
    });
  });
  if (http.app !== null) {
    const mounted = new Hono<{ Variables: AuthVariables }>();
    mounted.onError((error) => {
      const withResponse = error as { getResponse?: () => Response };
      if (typeof withResponse.getResponse === "function") return withResponse.getResponse();
      throw error;
    });
    mounted.route("/", http.app as unknown as Hono);
    app.route("/", mounted);
  }
  const disabled = http.settings.disabled.map((group) => GROUP_PATHS[group]);
  if (disabled.length > 0) {
    app.use("*", async (c: Context, next: Next) => {
      if (disabled.some((pattern) => pattern.test(c.req.path))) return c.json({ error: "NOT_FOUND", message: `no route ${c.req.method} ${c.req.path.slice(0, 200)} (its group is disabled by http.disable_* in langgraph.json)` }, 404);
      return next();
    });
  }
}

/** The `cors` middleware's options for `http.cors` (LangGraph's rules), or undefined to keep devmind's defaults. */
export function userCorsOptions(http: UserHttp | undefined, required: { exposeHeaders: readonly string[] }): Parameters<typeof honoCors>[0] | undefined {
  const cors = http?.settings.cors;
  if (cors === null || cors === undefined) return undefined;
  const regex = cors.allowOriginRegex === undefined ? undefined : new RegExp(cors.allowOriginRegex);
  const origin = regex !== undefined ? (requestOrigin: string) => (regex.test(requestOrigin) ? requestOrigin : undefined) : (cors.allowOrigins ?? "*");
  // as LangGraph: the headers clients need to read are always exposed when a list is given
  const expose = cors.exposeHeaders === undefined ? undefined : [...new Set([...cors.exposeHeaders.map((name) => name.toLowerCase()), ...required.exposeHeaders])];
  return {
    origin: origin as string | string[] | ((origin: string) => string | undefined),
    ...(cors.allowMethods === undefined ? {} : { allowMethods: cors.allowMethods }),
    ...(cors.allowHeaders === undefined ? {} : { allowHeaders: cors.allowHeaders }),
    ...(expose === undefined ? {} : { exposeHeaders: expose }),
    ...(cors.allowCredentials === undefined ? {} : { credentials: cors.allowCredentials }),
    ...(cors.maxAge === undefined ? {} : { maxAge: cors.maxAge }),
  };
}
