import { createHash, timingSafeEqual } from "node:crypto";
import type { ApiKeyEntry, OperationsSettings } from "../../config.js";

/** Whether a scrape may read `/metrics`: `ok`, or refused for want of a key (`missing`, 401) or a wrong one (`invalid`, 403). */
export type MetricsAccess = "ok" | "missing" | "invalid";

const digest = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest();

/**
 * Who may scrape: anyone when the metrics are public (DEVMIND_METRICS_PUBLIC) or when neither
 * API keys nor a metrics key are set (a loopback server); else the caller presents one of the
 * API keys or DEVMIND_METRICS_KEY (read-only: good for `/metrics` and nothing else), compared
 * by SHA-256 digest in constant time. `customAuth`: the project has its own auth handler, so
 * without a metrics key `/metrics` stays closed unless public.
 */
export function metricsAccess(settings: OperationsSettings["metrics"], apiKeys: readonly ApiKeyEntry[], presented: string | undefined, customAuth = false): MetricsAccess {
  const keys = [...apiKeys.map((entry) => entry.key), ...(settings.key === undefined ? [] : [settings.key])];
  if (settings.public || (keys.length === 0 && !customAuth)) return "ok";
  if (presented === undefined) return "missing";
  const given = digest(presented);
  let found = false;
  for (const key of keys) if (timingSafeEqual(given, digest(key))) found = true;
  return found ? "ok" : "invalid";
}

/** The key a scrape presents: `x-api-key: KEY` or `Authorization: Bearer KEY` (Prometheus' `authorization` / `bearer_token`). */
export function presentedScrapeKey(header: (name: string) => string | null | undefined): string | undefined {
  const direct = header("x-api-key");
  if (typeof direct === "string" && direct !== "") return direct;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header("authorization") ?? "");
  return match?.[1];
}
