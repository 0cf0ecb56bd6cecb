import { existsSync } from "node:fs";
import { AUTH_DEFAULTS } from "../../constants.js";
import { ConfigError } from "../../errors.js";
import type { ModuleReference } from "../../graphs/langgraph-http.js";
import type { AuthCallback, CustomAuth } from "./auth-types.js";

/**
 * Loads `auth.path` of langgraph.json (`./auth.ts:auth`) through the graphs' loader (TypeScript
 * via tsx, no build step) and checks that the export is LangGraph's `Auth` (it has the SDK's
 * `~handlerCache`). A missing file, a module that fails to import, a missing export or anything
 * that is not an `Auth` is a ConfigError naming the reference, so `devmind serve` refuses to start.
 */
export async function loadCustomAuth(reference: ModuleReference, options: { timeoutMs?: number } = {}): Promise<CustomAuth> {
  const where = `auth.path ${reference.source} (${reference.file})`;
  const refuse = (why: string): ConfigError => new ConfigError(`${where}: ${why}`, { key: "auth.path", file: reference.file });
  if (!existsSync(reference.file)) throw refuse("no such file");
  const { importGraphModule } = await import("../../graphs/load-graphs.js");
  let module: Record<string, unknown>;
  try {
    module = await importGraphModule(reference.file);
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    throw refuse(`the module failed to load: ${(text.split("\n")[0] ?? "").slice(0, 500)}`);
  }
  const exported = module[reference.exportName];
  if (exported === undefined || exported === null) throw refuse(`no export named ${reference.exportName}`);
  const cache = typeof exported === "object" ? (exported as Record<string, unknown>)["~handlerCache"] : undefined;
  if (typeof cache !== "object" || cache === null) {
    throw refuse(`the export ${reference.exportName} is not an Auth (expected \`export const ${reference.exportName} = new Auth()\` from @langchain/langgraph-sdk/auth)`);
  }
  const { authenticate, callbacks } = cache as { authenticate?: unknown; callbacks?: unknown };
  if (authenticate !== undefined && typeof authenticate !== "function") throw refuse("its authenticate handler is not a function");
  const handlers: Record<string, AuthCallback> = {};
  for (const [event, callback] of Object.entries((callbacks ?? {}) as Record<string, unknown>)) {
    if (typeof callback !== "function") throw refuse(`its on(${JSON.stringify(event)}) handler is not a function`);
    handlers[event] = callback as AuthCallback;
  }
  return { source: reference.source, authenticate: authenticate as CustomAuth["authenticate"], callbacks: handlers, timeoutMs: options.timeoutMs ?? AUTH_DEFAULTS.handlerTimeoutMs };
}
