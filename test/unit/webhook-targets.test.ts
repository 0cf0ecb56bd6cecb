import { describe, expect, it } from "vitest";
import { DevmindError } from "../../src/errors.js";
import { addressAllowed, checkWebhookUrl, webhookAllowListProblem, webhookPolicy } from "../../src/webhooks/webhook-targets.js";

function refusal(policy: ReturnType<typeof webhookPolicy>, url: unknown): string {
  try {
    checkWebhookUrl(policy, url);
  } catch (error) {
    expect(error).toBeInstanceOf(DevmindError);
    expect((error as DevmindError).code).toBe("RUN_INPUT_INVALID");
    expect((error as DevmindError).details["field"]).toBe("webhook");
    return (error as DevmindError).message;
  }
  throw new Error(`expected ${String(url)} to be refused`);
}

describe("webhook targets (DEVMIND_WEBHOOK_ALLOW)", () => {
  it("allows loopback only by default", () => {
    const policy = webhookPolicy();
    for (const url of ["http://127.0.0.1:9000/hook", "http://localhost/x", "https://[::1]:8443/y", "http://127.8.9.10/"]) expect(checkWebhookUrl(policy, url)).toBe(url);
    for (const url of ["http://10.0.0.1/", "http://192.168.1.2/", "http://172.20.0.1/", "http://169.254.169.254/", "https://example.com/", "http://[fe80::1]/", "http://0.0.0.0/"]) {
      expect(refusal(policy, url)).toMatch(/is not allowed/);
    }
  });

  it("refuses what is not an absolute http(s) URL without credentials", () => {
    const policy = webhookPolicy();
    expect(refusal(policy, "ftp://127.0.0.1/")).toMatch(/http or https/);
    expect(refusal(policy, "http://a:b@127.0.0.1/")).toMatch(/credentials/);
    expect(refusal(policy, "/hooks")).toMatch(/absolute/);
    expect(refusal(policy, "not a url")).toMatch(/not a valid URL/);
    expect(refusal(policy, 42)).toMatch(/http\(s\) URL/);
    expect(refusal(policy, `http://127.0.0.1/${"x".repeat(3_000)}`)).toMatch(/longer than/);
  });

  it("names, wildcards and ranges: a name may only reach public addresses unless its range is listed", () => {
    const policy = webhookPolicy(["hooks.example.com", "*.corp.example", "10.1.0.0/16"]);
    expect(checkWebhookUrl(policy, "https://hooks.example.com/a")).toBe("https://hooks.example.com/a");
    expect(checkWebhookUrl(policy, "https://ci.corp.example/a")).toBe("https://ci.corp.example/a");
    expect(checkWebhookUrl(policy, "http://10.1.2.3/")).toBe("http://10.1.2.3/");
    expect(refusal(policy, "http://10.2.0.1/")).toMatch(/not allowed/);
    expect(refusal(policy, "https://other.example.com/")).toMatch(/not allowed/);
    expect(refusal(policy, "http://127.0.0.1/")).toMatch(/not allowed/);
    // at connect time: public addresses pass, private ones only inside a listed range
    expect(addressAllowed(policy, "93.184.216.34")).toBe(true);
    expect(addressAllowed(policy, "10.1.9.9")).toBe(true);
    expect(addressAllowed(policy, "10.3.0.1")).toBe(false);
    expect(addressAllowed(policy, "127.0.0.1")).toBe(false);
    expect(addressAllowed(policy, "::ffff:192.168.0.1")).toBe(false);
    expect(addressAllowed(policy, "fd12::1")).toBe(false);
    expect(addressAllowed(policy, "2606:4700::1111")).toBe(true);
  });

  it("* allows any public host name or address, never a private one", () => {
    const policy = webhookPolicy(["*"]);
    expect(checkWebhookUrl(policy, "https://anything.example.org/")).toBe("https://anything.example.org/");
    expect(checkWebhookUrl(policy, "http://93.184.216.34/")).toBe("http://93.184.216.34/");
    expect(refusal(policy, "http://192.168.0.10/")).toMatch(/not allowed/);
    expect(refusal(policy, "http://[::1]/")).toMatch(/not allowed/);
  });

  it("reports malformed entries", () => {
    expect(webhookAllowListProblem(["localhost", "10.0.0.0/40"])).toMatch(/prefix/);
    expect(webhookAllowListProblem(["http://x"])).toMatch(/not a host name/);
    expect(webhookAllowListProblem(["a.example", "*.b.example", "::1", "fd00::/8"])).toBeNull();
  });
});
