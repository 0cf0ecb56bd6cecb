import { describe, expect, it } from "vitest";
import { configSecrets, loadConfig } from "../../src/config.js";
import { REDACTED, createRedactor, isSecretKey, redactText, redactedJson } from "../../src/secret-redaction.js";

describe("secret redaction", () => {
  it("recognises secret-named keys in any spelling, and leaves token counts alone", () => {
    for (const key of ["api_key", "apiKey", "X-API-Key", "authorization", "Authorization", "password", "db_password", "client_secret", "access_token", "githubToken", "cookie"]) {
      expect(isSecretKey(key), key).toBe(true);
    }
    for (const key of ["input_tokens", "output_tokens", "max_tokens", "tool_call_id", "path", "content", "token_budget"]) {
      expect(isSecretKey(key), key).toBe(false);
    }
  });

  it("replaces secret-looking text inside strings and keeps the rest", () => {
    expect(redactText("key sk-proj-abcdefghijklmnop1234 here")).toBe(`key ${REDACTED} here`);
    expect(redactText("Authorization: Bearer eyJhbGciOi.payload.sig")).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(redactText("postgres://app:hunter2@db:5432/x")).toBe(`postgres://app:${REDACTED}@db:5432/x`);
    expect(redactText("ghp_abcdefghijklmnopqrstuvwxyz0123 and AKIAABCDEFGHIJKLMNOP")).toBe(`${REDACTED} and ${REDACTED}`);
    expect(redactText("a task-list and risk-assessment-document")).toBe("a task-list and risk-assessment-document");
  });

  it("serialises with secret fields and secret text redacted at any depth", () => {
    const json = redactedJson({ args: { api_key: "abc", headers: { Authorization: "Basic Zm9vOmJhcg==" }, note: "use sk-abcdefghijklmnopqrstu" }, usage: { input_tokens: 3 } });
    expect(JSON.parse(json)).toEqual({ args: { api_key: REDACTED, headers: { Authorization: REDACTED }, note: `use ${REDACTED}` }, usage: { input_tokens: 3 } });
  });
});

describe("the configured secret values", () => {
  const config = loadConfig({
    OPENAI_API_KEY: "mysecretkey42",
    DEVMIND_API_KEYS: "ops=anothersecret77,ci=third-one-99",
    DEVMIND_IMAGE_MODEL: "gpt-image-1",
    DEVMIND_IMAGE_API_KEY: "imagekey-123",
    DATABASE_URL: "postgres://app:p%40ss-word9@db:5432/app",
  });

  it("are every key and the database password, as written and decoded", () => {
    expect(configSecrets(config).sort()).toEqual(["anothersecret77", "imagekey-123", "mysecretkey42", "p%40ss-word9", "p@ss-word9", "third-one-99"]);
  });

  it("are hidden verbatim where no pattern matches them, in text and in JSON at any depth", () => {
    const redactor = createRedactor(configSecrets(config));
    expect(redactText("Incorrect API key provided: mysecretkey42.")).toContain("mysecretkey42");
    expect(redactor.text("Incorrect API key provided: mysecretkey42.")).toBe(`Incorrect API key provided: ${REDACTED}.`);
    expect(redactor.text("login p@ss-word9 failed; x-api-key anothersecret77")).toBe(`login ${REDACTED} failed; x-api-key ${REDACTED}`);
    const json = redactor.json({ events: [{ message: "echo mysecretkey42 and third-one-99", usage: { input_tokens: 3 } }] });
    expect(JSON.parse(json)).toEqual({ events: [{ message: `echo ${REDACTED} and ${REDACTED}`, usage: { input_tokens: 3 } }] });
  });

  it("shorter than MIN_SECRET_CHARS are not used verbatim (they would hide ordinary words)", () => {
    expect(createRedactor(["abc"]).text("abc def")).toBe("abc def");
  });

  it("a stream redactor hides a configured value split at any point across pieces, and shows everything else in order", () => {
    const secrets = ["mysecretkey42", "pw1234"];
    const text = "a mysecretkey42 b pw1234 c mysecretkey42mysecretkey42 d";
    const expected = `a ${REDACTED} b ${REDACTED} c ${REDACTED}${REDACTED} d`;
    for (let first = 0; first <= text.length; first += 1) {
      for (const second of [first, Math.min(text.length, first + 1), Math.min(text.length, first + 7)]) {
        const stream = createRedactor(secrets).stream?.();
        if (stream === undefined) throw new Error("createRedactor has a stream redactor");
        const shown = [text.slice(0, first), text.slice(first, second), text.slice(second)].map((piece) => stream.push(piece)).join("") + stream.flush();
        expect(shown, `split at ${first}/${second}`).toBe(expected);
      }
    }
  });

  it("a stream redactor holds back only an end of the text that could begin a configured value", () => {
    const stream = createRedactor(["mysecretkey42"]).stream?.();
    expect(stream?.push("hello world, and more")).toBe("hello world, and more");
    expect(stream?.push(" then mysec")).toBe(" then ");
    expect(stream?.push("ond thoughts m")).toBe("mysecond thoughts ");
    expect(stream?.flush()).toBe("m");
    const plain = createRedactor([]).stream?.();
    expect(plain?.push("no secrets configured")).toBe("no secrets configured");
    expect(plain?.flush()).toBe("");
  });
});
