import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { request as httpRequest, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { addressAllowed, type WebhookPolicy } from "./webhook-targets.js";

/** How one POST of a webhook ended: delivered (2xx), or failed, and whether trying again may help. */
/** `refused`: the target's address is outside the allow-list (never retried). */
export type WebhookAttempt = { ok: true; status: number } | { ok: false; retry: boolean; refused?: boolean; error: string };

/** An error of the address check (a target that resolves into a refused range). */
class RefusedTarget extends Error {}

/**
 * A DNS lookup that keeps only addresses the policy allows, so the connection goes to an address
 * that was checked (no rebinding between the check and the connect).
 */
function guardedLookup(policy: WebhookPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error !== null) return callback(error, "", 0);
      const allowed = addresses.filter((entry) => addressAllowed(policy, entry.address));
      if (allowed.length === 0) {
        return callback(new RefusedTarget(`${hostname} resolves to ${addresses.map((entry) => entry.address).join(", ")}, outside the webhook allow-list`), "", 0);
      }
      if ((options as { all?: boolean }).all === true) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

/**
 * POSTs `body` (JSON) to `url` once, at most `timeoutMs`, without following redirects. 2xx is
 * delivered; 408, 429, 5xx and network errors may succeed later (`retry`); any other status, and a
 * target whose addresses the policy refuses, will not.
 */
export function postWebhook(policy: WebhookPolicy, url: string, body: string, timeoutMs: number): Promise<WebhookAttempt> {
  return new Promise((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return resolve({ ok: false, retry: false, error: "not a valid URL" });
    }
    const host = target.hostname.replace(/^\[|\]$/g, "");
    if (isIP(host) !== 0 && !addressAllowed(policy, host)) return resolve({ ok: false, retry: false, refused: true, error: `${host} is outside the webhook allow-list` });
    const options: RequestOptions = {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), "user-agent": "devmind-webhook" },
      lookup: guardedLookup(policy),
      timeout: timeoutMs,
    };
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    const req = send(target, options, (res) => {
      const status = res.statusCode ?? 0;
      // the answer's body is not read beyond draining it
      res.resume();
      res.on("end", () => {
        if (status >= 200 && status < 300) resolve({ ok: true, status });
        else resolve({ ok: false, retry: status === 408 || status === 429 || status >= 500, error: `HTTP ${status}` });
      });
      res.on("error", (error) => resolve({ ok: false, retry: true, error: error.message }));
    });
    // `timeout` bounds silence on the socket; this bounds the whole exchange (a slow-drip answer too)
    const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on("close", () => clearTimeout(deadline));
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", (error) => resolve(error instanceof RefusedTarget ? { ok: false, retry: false, refused: true, error: error.message } : { ok: false, retry: true, error: error.message }));
    req.end(body);
  });
}
