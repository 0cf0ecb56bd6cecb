import { describe, expect, it } from "vitest";
import { REDACTED, isSecretKey, redactText, redactedJson } from "../../src/runtime/secret-redaction.js";

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
    expect(redactText("Authorization: Bearer eyJhbGciOi.payload.sig")).toBe(`Authorization: ${REDACTED}`);
    expect(redactText("postgres://app:hunter2@db:5432/x")).toBe(`postgres://app:${REDACTED}@db:5432/x`);
    expect(redactText("ghp_abcdefghijklmnopqrstuvwxyz0123 and AKIAABCDEFGHIJKLMNOP")).toBe(`${REDACTED} and ${REDACTED}`);
    expect(redactText("a task-list and risk-assessment-document")).toBe("a task-list and risk-assessment-document");
  });

  it("serialises with secret fields and secret text redacted at any depth", () => {
    const json = redactedJson({ args: { api_key: "abc", headers: { Authorization: "Basic Zm9vOmJhcg==" }, note: "use sk-abcdefghijklmnopqrstu" }, usage: { input_tokens: 3 } });
    expect(JSON.parse(json)).toEqual({ args: { api_key: REDACTED, headers: { Authorization: REDACTED }, note: `use ${REDACTED}` }, usage: { input_tokens: 3 } });
  });
});
