import { BlockList, isIP } from "node:net";
import { WEBHOOK_DEFAULTS } from "../constants.js";
import { DevmindError } from "../errors.js";

/**
 * Which webhook targets a runtime may call (DEVMIND_WEBHOOK_ALLOW). Entries are host names
 * (`hooks.example.com`), wildcards (`*.example.com`, or `*` for any name), IP addresses and CIDR
 * ranges (`10.1.2.0/24`, `::1`). A URL's host must match an entry; and when the target is called,
 * every address it connects to must either lie in an allowed IP or range, or be public: a name
 * that resolves into a private, loopback or link-local range is refused unless that range is
 * listed, so an allowed name cannot be pointed at the internal network (SSRF, DNS rebinding).
 */
export interface WebhookPolicy {
  /** The entries as given (for messages). */
  entries: readonly string[];
  names: readonly string[];
  suffixes: readonly string[];
  anyName: boolean;
  /** Allowed IP addresses and ranges. */
  addresses: BlockList;
}

/** Ranges that are never a public address (RFC 6890 and friends); refused unless listed. */
const NON_PUBLIC: readonly [string, number, "ipv4" | "ipv6"][] = [
  ["0.0.0.0", 8, "ipv4"],
  ["10.0.0.0", 8, "ipv4"],
  ["100.64.0.0", 10, "ipv4"],
  ["127.0.0.0", 8, "ipv4"],
  ["169.254.0.0", 16, "ipv4"],
  ["172.16.0.0", 12, "ipv4"],
  ["192.0.0.0", 24, "ipv4"],
  ["192.0.2.0", 24, "ipv4"],
  ["192.168.0.0", 16, "ipv4"],
  ["198.18.0.0", 15, "ipv4"],
  ["198.51.100.0", 24, "ipv4"],
  ["203.0.113.0", 24, "ipv4"],
  ["224.0.0.0", 4, "ipv4"],
  ["240.0.0.0", 4, "ipv4"],
  ["::", 128, "ipv6"],
  ["::1", 128, "ipv6"],
  ["64:ff9b::", 96, "ipv6"],
  ["100::", 64, "ipv6"],
  ["2001:db8::", 32, "ipv6"],
  ["fc00::", 7, "ipv6"],
  ["fe80::", 10, "ipv6"],
  ["ff00::", 8, "ipv6"],
];
const nonPublic = new BlockList();
for (const [network, prefix, type] of NON_PUBLIC) nonPublic.addSubnet(network, prefix, type);

const HOST_NAME = /^(\*|(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*)$/;

/** Parses one allow-list entry into `policy`; returns an error text for a malformed one. */
function addEntry(policy: { names: string[]; suffixes: string[]; anyName: boolean; addresses: BlockList }, raw: string): string | null {
  const entry = raw.trim().toLowerCase();
  const slash = entry.indexOf("/");
  const address = (slash === -1 ? entry : entry.slice(0, slash)).replace(/^\[|\]$/g, "");
  const family = isIP(address);
  if (family !== 0) {
    const type = family === 4 ? "ipv4" : "ipv6";
    const prefix = slash === -1 ? (family === 4 ? 32 : 128) : Number(entry.slice(slash + 1));
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128) || (slash !== -1 && !/^\d{1,3}$/.test(entry.slice(slash + 1)))) {
      return `bad prefix length in ${JSON.stringify(raw)}`;
    }
    policy.addresses.addSubnet(address, prefix, type);
    return null;
  }
  if (slash !== -1 || !HOST_NAME.test(entry)) return `${JSON.stringify(raw)} is not a host name, *.domain, *, IP address or CIDR range`;
  if (entry === "*") policy.anyName = true;
  else if (entry.startsWith("*.")) policy.suffixes.push(entry.slice(1));
  else policy.names.push(entry);
  return null;
}

/** Builds the policy from its entries; throws an Error naming a malformed entry (config checks it first). */
export function webhookPolicy(entries: readonly string[] = WEBHOOK_DEFAULTS.allow): WebhookPolicy {
  const policy = { entries: [...entries], names: [] as string[], suffixes: [] as string[], anyName: false, addresses: new BlockList() };
  for (const entry of entries) {
    const problem = addEntry(policy, entry);
    if (problem !== null) throw new Error(problem);
  }
  return policy;
}

/** The error text for a malformed allow-list entry, or null when every entry parses (for config validation). */
export function webhookAllowListProblem(entries: readonly string[]): string | null {
  try {
    webhookPolicy(entries);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function addressType(address: string): "ipv4" | "ipv6" {
  return isIP(address) === 6 ? "ipv6" : "ipv4";
}

/** Whether a connection to `address` is allowed: listed, or public. */
export function addressAllowed(policy: WebhookPolicy, address: string): boolean {
  const type = addressType(address);
  if (policy.addresses.check(address, type)) return true;
  // an IPv4-mapped IPv6 address is judged as the IPv4 address it carries
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped !== undefined) return addressAllowed(policy, mapped);
  return !nonPublic.check(address, type);
}

/**
 * Checks a run's or cron's `webhook` against the policy and returns the URL as given: http or
 * https, no credentials in it, a host the allow-list names (an IP literal must be listed, or be
 * public while `*` is allowed). RUN_INPUT_INVALID (422) with `field: "webhook"` otherwise.
 */
export function checkWebhookUrl(policy: WebhookPolicy, webhook: unknown): string {
  const refuse = (why: string) => new DevmindError("RUN_INPUT_INVALID", `webhook ${why}`, { details: { field: "webhook" } });
  if (typeof webhook !== "string" || webhook === "") throw refuse("must be an http(s) URL");
  if (webhook.length > WEBHOOK_DEFAULTS.maxUrlChars) throw refuse(`is longer than ${WEBHOOK_DEFAULTS.maxUrlChars} characters`);
  let url: URL;
  try {
    url = new URL(webhook);
  } catch {
    throw refuse(webhook.startsWith("/") ? "must be an absolute http(s) URL (paths on this server are not supported)" : "is not a valid URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw refuse("must be an http or https URL");
  if (url.username !== "" || url.password !== "") throw refuse("must not carry credentials");
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const allowed =
    isIP(host) !== 0
      ? addressAllowed(policy, host) && (policy.anyName || policy.addresses.check(host, addressType(host)))
      : policy.anyName || policy.names.includes(host) || policy.suffixes.some((suffix) => host.endsWith(suffix));
  if (!allowed) throw refuse(`target ${JSON.stringify(host)} is not allowed (DEVMIND_WEBHOOK_ALLOW: ${policy.entries.join(",")})`);
  return webhook;
}
