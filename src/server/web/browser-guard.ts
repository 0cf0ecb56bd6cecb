import type { MiddlewareHandler } from "hono";
import type { ApiKeyEntry } from "../../config.js";
import { httpError } from "../http-errors.js";

/** True for the names a loopback-only server is reached by: localhost, 127.0.0.0/8, ::1. */
export function isLoopbackName(hostname: string): boolean {
  const bare = hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  return bare === "localhost" || bare.endsWith(".localhost") || bare === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/** The host name of a `Host` header (`name:port`, `[v6]:port`), or undefined when it is unusable. */
function hostnameOf(hostHeader: string | undefined): string | undefined {
  if (hostHeader === undefined || hostHeader === "") return undefined;
  try {
    return new URL(`http://${hostHeader}`).hostname;
  } catch {
    return undefined;
  }
}

/** The host name of an `Origin` header, or undefined for `null` and anything unparsable. */
function originHostname(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    return url.protocol === "http:" || url.protocol === "https:" ? url.hostname : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Keeps other web sites away from a server that has no API keys (which `startServer` allows only
 * on a loopback address). Without keys, nothing else stops a page the user happens to visit from
 * sending `fetch("http://127.0.0.1:8787/runs/ID/decisions", {method: "POST", body})` — a
 * text/plain POST needs no CORS preflight — and approving a pending `run_command`, or from
 * reading runs and thread state. So, without keys, an API request is refused with 403 FORBIDDEN when:
 *
 * - its `Host` is not a loopback name (DNS rebinding: an attacker's name resolving to 127.0.0.1
 *   makes the browser treat the attacker's page and this server as one origin), or
 * - it carries an `Origin` (browsers add one to every cross-origin request and to same-origin
 *   POSTs) whose host is not a loopback name — `null` included (sandboxed frames, files).
 *
 * Pages served from loopback (this server's own page, a local UI on another port) and clients that
 * send no Origin (the SDK from Node, the CLI, curl) pass. With API keys configured the guard does
 * nothing: the key is the protection, and CORS stays open for browser UIs that hold a key.
 *
 * Mount it after the open routes (`/ok`, `/info`, the page) and before the API.
 */
export function rejectForeignBrowserRequests(apiKeys: readonly ApiKeyEntry[]): MiddlewareHandler {
  return async (c, next) => {
    if (apiKeys.length > 0) return next();
    const host = hostnameOf(c.req.header("host"));
    if (host === undefined || !isLoopbackName(host)) {
      throw httpError("FORBIDDEN", "this server has no API keys and answers only requests addressed to a loopback name (localhost, 127.0.0.1, ::1)");
    }
    const origin = c.req.header("origin");
    if (origin !== undefined) {
      const from = originHostname(origin);
      if (from === undefined || !isLoopbackName(from)) {
        throw httpError("FORBIDDEN", "this server has no API keys and refuses requests from pages of other sites; set DEVMIND_API_KEYS to allow browser clients elsewhere");
      }
    }
    return next();
  };
}
