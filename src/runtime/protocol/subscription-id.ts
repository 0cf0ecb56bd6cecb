import { randomBytes } from "node:crypto";
import { z } from "zod";
import { PROTOCOL_DEFAULTS } from "../../constants.js";
import { filterOf, type EventFilter } from "./command-schema.js";

const PREFIX = "sub.";

const Encoded = z.object({ c: z.array(z.string().max(200)).min(1).max(32), n: z.array(z.array(z.string().max(512)).max(64)).max(64).optional(), d: z.number().int().nonnegative().optional(), k: z.string().max(32) }).strict();

/**
 * A WebSocket subscription's id, naming its filter (channels, namespaces, depth) and a random
 * nonce: `sub.` + base64url JSON. Nothing about a subscription is kept on the server, so
 * `subscription.reconnect` restores it from its id alone, on any connection, in any server
 * process, after a restart (`filterOfSubscriptionId`).
 */
export function subscriptionIdOf(filter: Pick<EventFilter, "channels" | "namespaces" | "depth">): string {
  const encoded = { c: [...filter.channels], ...(filter.namespaces === undefined ? {} : { n: filter.namespaces }), ...(filter.depth === undefined ? {} : { d: filter.depth }), k: randomBytes(6).toString("base64url") };
  return PREFIX + Buffer.from(JSON.stringify(encoded), "utf8").toString("base64url");
}

/** The filter a subscription id names (`subscriptionIdOf`), without `since`; undefined for an id this server did not give. */
export function filterOfSubscriptionId(id: string): EventFilter | undefined {
  if (!id.startsWith(PREFIX) || id.length > PROTOCOL_DEFAULTS.subscriptionIdMaxChars) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(id.slice(PREFIX.length), "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
  const parsed = Encoded.safeParse(json);
  if (!parsed.success) return undefined;
  const filtered = filterOf({ channels: parsed.data.c, namespaces: parsed.data.n, depth: parsed.data.d });
  return "filter" in filtered ? filtered.filter : undefined;
}
