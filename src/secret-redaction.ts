/**
 * The one secret redactor of devmind. Everything that leaves a run — stored events, run records'
 * errors, log lines, CLI error output, tool error messages — goes through it, so one rule decides
 * what is hidden: the configured secret values verbatim (the model and image keys, the server's
 * API keys, the database password; see `configSecrets` in config.ts), then secret-looking text
 * whatever its origin (`sk-…`, `Bearer …`, `api_key: …`, `?key=…`, provider key shapes, URL
 * passwords), and the values of secret-named fields in JSON.
 */

/** What replaces a redacted secret. */
export const REDACTED = "[REDACTED]";

/** Configured values shorter than this are not redacted verbatim (they would hide ordinary text). */
export const MIN_SECRET_CHARS = 4;

/**
 * Key names (lower-cased, without `-`/`_`) whose values are secrets whatever they hold, and
 * suffixes that make a key one (`github_token`, `db_password`, `openai_api_key`).
 */
const SECRET_KEYS = new Set(["authorization", "proxyauthorization", "cookie", "setcookie", "passwd", "passphrase", "privatekey", "credentials", "sessionid"]);
const SECRET_KEY_SUFFIXES = ["apikey", "password", "secret", "token"];

/** Secret-looking text replaced whole: OpenAI-style `sk-…` keys, GitHub, Slack, AWS and Google keys. */
const WHOLE_PATTERNS: RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{8,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}/g,
];
/** Secret-looking text whose first group (the label) is kept: `Bearer …`, `api_key: …`, `?key=…`. */
const LABELLED_PATTERNS: RegExp[] = [
  /\b((?:Bearer|Basic)\s+)[A-Za-z0-9._~+/=-]{6,}/gi,
  /\b((?:x-)?api[_-]?key["']?\s*[:=]\s*["']?)[^\s"',;&}]+/gi,
  /([?&](?:api[_-]?)?key=)[^&\s"']+/gi,
];
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+):[^\s@/]+@/gi;
/**
 * Every pattern above in one case-insensitive alternation, without `g`: a text it does not match
 * has nothing any of them would replace (it matches a superset of what they match), so such a
 * text is scanned once instead of once per pattern.
 */
const ANY_PATTERN = new RegExp([URL_PASSWORD, ...WHOLE_PATTERNS, ...LABELLED_PATTERNS].map((pattern) => pattern.source).join("|"), "i");

/** True when a property named `key` holds a secret by its name alone. */
export function isSecretKey(key: string): boolean {
  const normal = key.toLowerCase().replace(/[^a-z0-9]/g, "");
  return SECRET_KEYS.has(normal) || SECRET_KEY_SUFFIXES.some((suffix) => normal.endsWith(suffix));
}

/**
 * `text` with each of `secrets` (verbatim, when at least MIN_SECRET_CHARS long) and every
 * secret-looking part replaced by REDACTED; the rest is kept for context.
 *
 * @example
 *   redactSecrets("401: Incorrect API key provided: mysecretkey42", [config.openai.apiKey]);
 */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= MIN_SECRET_CHARS) out = out.split(secret).join(REDACTED);
  }
  if (!ANY_PATTERN.test(out)) return out;
  out = out.replace(URL_PASSWORD, `$1:${REDACTED}@`);
  for (const pattern of WHOLE_PATTERNS) out = out.replace(pattern, REDACTED);
  for (const pattern of LABELLED_PATTERNS) out = out.replace(pattern, `$1${REDACTED}`);
  return out;
}

/** `redactSecrets` without configured values: the patterns only. */
export function redactText(text: string): string {
  return redactSecrets(text);
}

/**
 * Serialises `value` to JSON with secrets redacted: the value of any secret-named key (see
 * `isSecretKey`) becomes REDACTED, and every string goes through `redactSecrets` with `secrets`.
 * Used for everything stored in run events, which reach logs, the CLI and HTTP clients, so that
 * no event ever carries an API key (CONTRACT section 6).
 */
export function redactedJson(value: unknown, secrets: readonly string[] = []): string {
  return JSON.stringify(value, (key, item: unknown) => {
    if (key !== "" && isSecretKey(key) && item !== null && item !== undefined && item !== "") return REDACTED;
    return typeof item === "string" ? redactSecrets(item, secrets) : item;
  });
}

/** A redactor bound to the configured secret values, handed to whatever stores or prints. */
export interface Redactor {
  /** `redactSecrets(text, secrets)`. */
  text(text: string): string;
  /** `redactedJson(value, secrets)`. */
  json(value: unknown): string;
  /**
   * A redactor for one text that arrives in pieces (a model's streamed deltas), so that a secret
   * split across two pieces is hidden too. Optional: a custom redactor without it gets each piece
   * redacted on its own.
   */
  stream?(): TextStreamRedactor;
}

/**
 * Redacts a text that arrives in pieces. `push` returns what may be shown now: everything but a
 * held-back tail that could be the start of a configured secret value (the longest end of the
 * text so far that begins one; usually nothing), so a value split across pieces is complete
 * before any of it is shown, and is hidden whole. `flush` returns the held tail once the text is
 * complete. Secret patterns (`sk-…`, `Bearer …`) are applied to each returned piece; they have no
 * bounded length, so only configured values are held back for.
 */
export interface TextStreamRedactor {
  push(piece: string): string;
  flush(): string;
}

/** Length of the longest end of `text` that is the start (shorter than the whole) of one of `values`. */
function partialSecretTail(text: string, values: readonly string[]): number {
  let longest = 0;
  for (const value of values) {
    for (let length = Math.min(value.length - 1, text.length); length > longest; length -= 1) {
      if (text.endsWith(value.slice(0, length))) {
        longest = length;
        break;
      }
    }
  }
  return longest;
}

/** The stream redactor over `values` (at least MIN_SECRET_CHARS long, longest first). */
function streamRedactor(values: readonly string[]): TextStreamRedactor {
  let held = "";
  return {
    push(piece) {
      held += piece;
      let cut = held.length - partialSecretTail(held, values);
      // a whole secret that starts before the cut and ends after it is shown whole (as REDACTED)
      for (let moved = true; moved; ) {
        moved = false;
        for (const secret of values) {
          for (let at = held.indexOf(secret, Math.max(0, cut - secret.length + 1)); at !== -1 && at < cut; at = held.indexOf(secret, at + 1)) {
            if (at + secret.length > cut) {
              cut = at + secret.length;
              moved = true;
            }
          }
        }
      }
      if (cut <= 0) return "";
      const shown = held.slice(0, cut);
      held = held.slice(cut);
      return redactSecrets(shown, values);
    },
    flush() {
      const rest = held;
      held = "";
      return redactSecrets(rest, values);
    },
  };
}

/**
 * A redactor that also hides `secrets` verbatim (longest first, so a key containing another is
 * hidden whole). Processes build one from `configSecrets(config)` and pass it to the runtime
 * (events, run errors) and the logger.
 *
 * @example
 *   const redactor = createRedactor(configSecrets(config));
 *   const logger = createLogger({ level: config.logLevel, redact: redactor.text });
 */
export function createRedactor(secrets: readonly string[] = []): Redactor {
  const values = [...new Set(secrets.filter((s) => s.length >= MIN_SECRET_CHARS))].sort((a, b) => b.length - a.length);
  return {
    text: (text) => redactSecrets(text, values),
    json: (value) => redactedJson(value, values),
    stream: () => streamRedactor(values),
  };
}
