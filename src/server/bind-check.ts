import type { DevmindConfig } from "../config.js";
import { ConfigError } from "../errors.js";

/** True for 127.0.0.0/8, ::1 and localhost. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/**
 * Throws ConfigError when `host` is not a loopback address and no API keys are configured (and no
 * auth handler `customAuth` from langgraph.json authenticates callers): an open server on a network
 * would let anyone run tools and approve them.
 */
export function checkBindable(host: string, config: DevmindConfig, customAuth = false): void {
  if (!isLoopbackHost(host) && config.server.apiKeys.length === 0 && !customAuth) {
    throw new ConfigError(`refusing to listen on ${host} without API keys: set DEVMIND_API_KEYS (name=key,...) or bind a loopback host (127.0.0.1)`, { variables: ["DEVMIND_HOST", "DEVMIND_API_KEYS"] });
  }
}
