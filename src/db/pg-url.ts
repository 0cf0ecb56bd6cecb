import { DatabaseError } from "../errors.js";

/** One host of a PostgreSQL URL, with its port (5432 when the URL names none). */
export interface PgHost {
  readonly host: string;
  readonly port: number;
}

/**
 * What libpq's `target_session_attrs` asks for, as far as devmind can serve it: it writes on every
 * step, so it always needs the host that accepts writes; `any` (libpq's default) still tries the
 * hosts in order but skips a standby.
 */
export type TargetSessionAttrs = "any" | "read-write";

/** A parsed `postgres://` URL, possibly naming several hosts (`postgres://u@h1:5432,h2:5433/db`). */
export interface PgUrl {
  /** The hosts in the order given; one for an ordinary URL. */
  readonly hosts: readonly PgHost[];
  readonly targetSessionAttrs: TargetSessionAttrs;
  /** The URL without its password, safe to print. */
  readonly printable: string;
  /** The password as written (percent-encoded), or "" when there is none. */
  readonly password: string;
  /** A single-host URL for `host` that node-postgres understands (no `target_session_attrs`). */
  urlFor(host: PgHost): string;
  /** `host:port`, as log lines and errors name a host. */
  nameOf(host: PgHost): string;
}

const DEFAULT_PORT = 5432;
const ACCEPTED_ATTRS: Record<string, TargetSessionAttrs> = { any: "any", "read-write": "read-write", primary: "read-write" };
const URL_SHAPE = /^(postgres(?:ql)?):\/\/([^/?#]*)(.*)$/i;

/**
 * Parses a PostgreSQL URL the way libpq reads a multi-host one — `postgres://USER[:PASSWORD]@H1[:P1],
 * H2[:P2]/DB?target_session_attrs=read-write` — which node-postgres (8.x) does not: devmind tries
 * the hosts in order itself (see `PrimaryLocator`). A URL with one host keeps its usual meaning.
 * Throws DATABASE_URL_INVALID naming `variable` for anything else, and for a
 * `target_session_attrs` asking for a read-only server (devmind writes).
 */
export function parsePgUrl(url: string, variable = "DATABASE_URL"): PgUrl {
  const invalid = (why: string): DatabaseError => new DatabaseError("DATABASE_URL_INVALID", `${variable} ${why}`, { details: { variable } });
  const shape = URL_SHAPE.exec(url);
  if (shape === null) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(url) && !/^postgres(ql)?:/i.test(url)) throw invalid(`must start with postgres:// or postgresql://, got ${url.slice(0, url.indexOf(":") + 1)}//`);
    throw invalid("is not a valid URL: expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE");
  }
  const [, scheme = "postgres", authority = "", rest = ""] = shape;
  const at = authority.lastIndexOf("@");
  const userinfo = at === -1 ? "" : authority.slice(0, at);
  const hostList = authority.slice(at + 1);
  const colon = userinfo.indexOf(":");
  const password = colon === -1 ? "" : userinfo.slice(colon + 1);
  const printableUserinfo = colon === -1 ? userinfo : `${userinfo.slice(0, colon)}${password === "" ? ":" : ":***"}`;

  const queryStart = rest.indexOf("?");
  const hashStart = rest.indexOf("#");
  const queryEnd = hashStart === -1 ? rest.length : hashStart;
  const path = queryStart === -1 ? rest.slice(0, queryEnd) : rest.slice(0, queryStart);
  const params = new URLSearchParams(queryStart === -1 || queryStart > queryEnd ? "" : rest.slice(queryStart + 1, queryEnd));
  const attrs = params.get("target_session_attrs");
  let targetSessionAttrs: TargetSessionAttrs = "any";
  if (attrs !== null) {
    const accepted = ACCEPTED_ATTRS[attrs];
    if (accepted === undefined) throw invalid(`has target_session_attrs=${attrs}: devmind writes, so it needs read-write (or primary, or any)`);
    targetSessionAttrs = accepted;
  }
  params.delete("target_session_attrs");
  const query = params.toString();
  const tail = `${path}${query === "" ? "" : `?${query}`}`;

  const hosts = hostList === "" ? [] : hostList.split(",").map((entry) => parseHost(entry, invalid));
  if (hosts.length === 0 && !params.has("host")) throw invalid("has no host: expected postgres://USER@HOST[:PORT]/DATABASE");
  if (hosts.length > 1 && params.has("host")) throw invalid("names hosts both before the path and in ?host=: use one of them");
  const prefix = (withPassword: boolean): string => `${scheme}://${withPassword ? userinfo : printableUserinfo}${userinfo === "" ? "" : "@"}`;
  const nameOf = (host: PgHost): string => `${host.host.includes(":") ? `[${host.host}]` : host.host}:${host.port}`;
  return {
    // a URL with `?host=/socket/dir` (and no host before the path) is node-postgres's own business
    hosts: hosts.length === 0 ? [{ host: params.get("host") ?? "", port: Number(params.get("port") ?? DEFAULT_PORT) }] : hosts,
    targetSessionAttrs,
    printable: `${prefix(false)}${hostList}${rest}`,
    password,
    // one host and nothing to strip: the URL exactly as given, as node-postgres always read it
    urlFor: (host) => (hosts.length <= 1 && attrs === null ? url : hosts.length === 0 ? `${prefix(true)}${tail}` : `${prefix(true)}${nameOf(host)}${tail}`),
    nameOf,
  };
}

function parseHost(entry: string, invalid: (why: string) => DatabaseError): PgHost {
  const bracketed = /^\[([^\]]+)\](?::(\d*))?$/.exec(entry);
  const plain = /^([^:[\]]+)(?::(\d*))?$/.exec(entry);
  const match = bracketed ?? plain;
  if (match === null || match[1] === undefined || match[1] === "") throw invalid(`has a host list entry ${JSON.stringify(entry)} that is not HOST[:PORT]`);
  const port = match[2] === undefined || match[2] === "" ? DEFAULT_PORT : Number(match[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw invalid(`has a port out of range in ${JSON.stringify(entry)}`);
  return { host: match[1], port };
}
