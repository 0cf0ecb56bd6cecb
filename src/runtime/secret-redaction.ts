/** What replaces a redacted secret in stored events. */
export const REDACTED = "[REDACTED]";

/**
 * Key names (lower-cased, without `-`/`_`) whose values are secrets whatever they hold, and
 * suffixes that make a key one (`github_token`, `db_password`, `openai_api_key`).
 */
const SECRET_KEYS = new Set(["authorization", "proxyauthorization", "cookie", "setcookie", "passwd", "passphrase", "privatekey", "credentials", "sessionid"]);
const SECRET_KEY_SUFFIXES = ["apikey", "password", "secret", "token"];

/**
 * Secret-looking text inside strings: OpenAI/Anthropic-style `sk-…` keys, `Bearer …` tokens,
 * GitHub, Slack and Google API keys, AWS access key ids, and passwords inside URLs.
 */
const SECRET_PATTERNS: RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}/g,
];
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+):[^\s@/]+@/gi;

/** True when a property named `key` holds a secret by its name alone. */
export function isSecretKey(key: string): boolean {
  const normal = key.toLowerCase().replace(/[^a-z0-9]/g, "");
  return SECRET_KEYS.has(normal) || SECRET_KEY_SUFFIXES.some((suffix) => normal.endsWith(suffix));
}

/** `text` with every secret-looking part replaced by REDACTED (the rest kept for context). */
export function redactText(text: string): string {
  let out = text.replace(URL_PASSWORD, `$1:${REDACTED}@`);
  for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, REDACTED);
  return out;
}

/**
 * Serialises `value` to JSON with secrets redacted: the value of any secret-named key (see
 * `isSecretKey`) becomes REDACTED, and secret-looking substrings of every string (see
 * `redactText`) are replaced. Used for everything stored in run events, which reach logs, the
 * CLI and HTTP clients, so that no event ever carries an API key (CONTRACT section 6).
 */
export function redactedJson(value: unknown): string {
  return JSON.stringify(value, (key, item: unknown) => {
    if (key !== "" && isSecretKey(key) && item !== null && item !== undefined && item !== "") return REDACTED;
    return typeof item === "string" ? redactText(item) : item;
  });
}
