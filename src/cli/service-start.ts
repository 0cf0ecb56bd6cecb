import { DATABASE_FAULT_DEFAULTS } from "../constants.js";
import type { LanggraphConfig } from "../graphs/langgraph-config.js";
import { retryDatabaseFaults } from "../runtime/execution/backoff.js";
import type { UiBundles } from "../server/ui-bundles.js";
import type { UserHttp } from "../server/user-http.js";
import type { CustomAuth } from "../server/custom-auth/auth-types.js";

/**
 * What `devmind serve` mounts of a project's langgraph.json besides its graphs: `auth.path` (its
 * LangGraph `Auth` handler, loaded now: one that fails to load is exit 2 naming it), `http` (its Hono
 * app loaded now, so a broken one is exit 2 before anything opens) and `ui` (bundled now with
 * esbuild; an entry that cannot be bundled is a warning on stderr and is not served, the rest of
 * the server is). Call after the graphs loaded (their `env` applied).
 */
export async function loadProjectHttp(config: LanggraphConfig | null, options: { authTimeoutMs?: number } = {}): Promise<{ http: UserHttp | undefined; ui: UiBundles | undefined; auth: CustomAuth | undefined }> {
  if (config === null) return { http: undefined, ui: undefined, auth: undefined };
  // a handler that fails to load stops `serve` (exit 2) naming it: never a server without the auth the project asked for
  let auth: CustomAuth | undefined;
  if (config.auth !== null) {
    const { loadCustomAuth } = await import("../server/custom-auth/load-auth.js");
    auth = await loadCustomAuth(config.auth, options.authTimeoutMs === undefined ? {} : { timeoutMs: options.authTimeoutMs });
  }
  let http: UserHttp | undefined;
  if (config.http !== null) {
    const { loadUserHttp } = await import("../server/user-http.js");
    http = await loadUserHttp(config.http);
  }
  let ui: UiBundles | undefined;
  if (config.ui.length > 0 && !(config.http?.disabled.includes("ui") ?? false)) {
    const { buildUiBundles } = await import("../server/ui-bundles.js");
    const built = await buildUiBundles(config.ui, { cwd: config.dir, shared: config.uiShared });
    for (const warning of built.warnings) process.stderr.write(`devmind: warning: ${config.path}: ${warning}\n`);
    ui = built.bundles;
  }
  return { http, ui, auth };
}

/**
 * Starts a long-running command (`devmind worker`, `devmind serve`) whose database may be away
 * for a moment — a restart, a failover, a container starting next to it: `start` (open, migrate,
 * listen, start workers; it must clean up what it opened when it throws) is retried on database
 * faults with a jittered backoff for up to `DATABASE_FAULT_DEFAULTS.serviceStartMaxMs`, saying so
 * once on stderr. Any other error, or a database still away after that, ends the command as before.
 */
export async function startService<T>(name: string, start: () => Promise<T>): Promise<T> {
  return retryDatabaseFaults(start, {
    maxMs: DATABASE_FAULT_DEFAULTS.serviceStartMaxMs,
    onFault: (error, attempt) => {
      if (attempt !== 1) return;
      const reason = error instanceof Error ? error.message : String(error);
      process.stderr.write(`devmind ${name}: the database is unreachable while starting (${reason}); retrying for up to ${DATABASE_FAULT_DEFAULTS.serviceStartMaxMs / 1000} s\n`);
    },
  });
}
