import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { SERVER_DEFAULTS } from "../constants.js";
import type { AuthVariables } from "./auth.js";
import { isLoopbackHost } from "./bind-check.js";
import { httpError } from "./http-errors.js";

/**
 * A fresh local owner key for `devmind serve` / `dev` on the embedded database: the server accepts
 * it (`localOwnerGate`) and writes it into the data directory's lock file (mode 0600), where only a
 * user who could open the database directly reads it. Never logged.
 */
export function newLocalOwnerKey(): string {
  return randomBytes(SERVER_DEFAULTS.localOwnerKeyBytes).toString("base64url");
}

const digest = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest();

/** The address of the TCP peer of a request served by `@hono/node-server`; undefined in process (no socket). */
function peerAddress(env: unknown): string | undefined {
  const incoming = (env as { incoming?: { socket?: { remoteAddress?: unknown } } } | undefined)?.incoming;
  const address = incoming?.socket?.remoteAddress;
  return typeof address === "string" ? address : undefined;
}

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 (`::ffff:127.0.0.1`). */
function isLoopbackPeer(address: string): boolean {
  return isLoopbackHost(address.toLowerCase().replace(/^::ffff:/, ""));
}

/**
 * Recognises the local owner: a request from a loopback peer that presents the server's local
 * owner key (SERVER_DEFAULTS.localOwnerHeader, compared in constant time). It is what a CLI
 * command beside `serve` / `dev` on the embedded database sends (src/cli/remote): it read the key
 * from the data directory's lock file, so it could open the database itself, and it gets the
 * same trust here — the API keys and the project's auth handler are not asked (the gates skip a
 * request with `localOwner` set), every thread is visible, and the name it claims in
 * SERVER_DEFAULTS.localOwnerByHeader (`--by`) becomes the `principal` recorded on its decisions
 * and resumes (else SERVER_DEFAULTS.localOwnerPrincipal), and the one in
 * SERVER_DEFAULTS.localOwnerReasonHeader the reason of a resume (`auditReason`). Anything else — no key, a wrong key, a
 * peer that is not loopback, a request made in process — passes on unchanged to the usual gate,
 * and the claimed name is never read for it. The header is removed from the request either way,
 * so neither the project's handler nor its routes ever see a key.
 */
export function localOwnerGate(key: string): MiddlewareHandler<{ Variables: AuthVariables }> {
  const expected = digest(key);
  return async (c, next) => {
    const presented = c.req.raw.headers.get(SERVER_DEFAULTS.localOwnerHeader);
    if (presented === null) return next();
    c.req.raw.headers.delete(SERVER_DEFAULTS.localOwnerHeader);
    const peer = peerAddress(c.env);
    if (peer === undefined || !isLoopbackPeer(peer) || !timingSafeEqual(digest(presented), expected)) return next();
    c.set("localOwner", true);
    c.set("principal", claimedName(c.req.raw.headers.get(SERVER_DEFAULTS.localOwnerByHeader)));
    const reason = c.req.raw.headers.get(SERVER_DEFAULTS.localOwnerReasonHeader);
    if (reason !== null && reason !== "") c.set("auditReason", decoded(reason, SERVER_DEFAULTS.localOwnerReasonHeader));
    return next();
  };
}

/** A URI-encoded header's text; 400 when it is not URI-encoded. */
function decoded(value: string, header: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    throw httpError("BAD_REQUEST", `${header} is not URI-encoded`);
  }
}

/** The decoded `--by` of a local owner's request; 400 for one that is not a short printable name. */
function claimedName(header: string | null): string {
  if (header === null || header === "") return SERVER_DEFAULTS.localOwnerPrincipal;
  const name = decoded(header, SERVER_DEFAULTS.localOwnerByHeader);
  if (name.trim() === "" || name.length > SERVER_DEFAULTS.localOwnerByMaxChars || /[\u0000-\u001f\u007f]/.test(name)) {
    throw httpError("BAD_REQUEST", `${SERVER_DEFAULTS.localOwnerByHeader} must name who acts in 1-${SERVER_DEFAULTS.localOwnerByMaxChars} printable characters`);
  }
  return name;
}
