/**
 * The local owner gate (src/server/local-owner.ts): a loopback peer presenting the server's local
 * owner key passes the API key check as the name it claims; anyone else meets the usual gate, and
 * the name it claims is never read. The key header never reaches what comes after the gate.
 */
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { requireApiKey, type AuthVariables } from "../../src/server/auth.js";
import { errorBody } from "../../src/server/http-errors.js";
import { localOwnerGate, newLocalOwnerKey } from "../../src/server/local-owner.js";

const KEY = newLocalOwnerKey();

function app(): Hono<{ Variables: AuthVariables }> {
  const hono = new Hono<{ Variables: AuthVariables }>();
  hono.onError((error, c) => {
    const { status, body } = errorBody(error);
    return c.json(body, status as 400);
  });
  hono.use("*", localOwnerGate(KEY));
  hono.use("*", requireApiKey([{ name: "ci", key: "the-api-key" }]));
  hono.get("/who", (c) => c.json({ principal: c.get("principal"), owner: c.get("localOwner") === true, keySeen: c.req.header("x-devmind-local-owner") ?? null, ...(c.get("auditReason") === undefined ? {} : { reason: c.get("auditReason") }) }));
  return hono;
}

/** A request from TCP peer `peer` (undefined: made in process, no socket). */
async function who(headers: Record<string, string>, peer: string | undefined): Promise<{ status: number; body: Record<string, unknown> }> {
  const env = peer === undefined ? undefined : { incoming: { socket: { remoteAddress: peer } } };
  const response = await app().request("/who", { headers }, env);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("localOwnerGate", () => {
  it("a loopback peer with the key is the local owner: the name it gives (URI-encoded) is its principal, no API key asked", async () => {
    for (const peer of ["127.0.0.1", "::1", "::ffff:127.0.0.1"]) {
      expect(await who({ "x-devmind-local-owner": KEY, "x-devmind-by": encodeURIComponent("Zoë at the desk") }, peer)).toEqual({ status: 200, body: { principal: "Zoë at the desk", owner: true, keySeen: null } });
    }
    expect(await who({ "x-devmind-local-owner": KEY }, "127.0.0.1")).toEqual({ status: 200, body: { principal: "local-owner", owner: true, keySeen: null } });
    expect(await who({ "x-devmind-local-owner": KEY, "x-devmind-by": "ann", "x-devmind-reason": encodeURIComponent("her pick, 100%") }, "127.0.0.1")).toEqual({ status: 200, body: { principal: "ann", owner: true, keySeen: null, reason: "her pick, 100%" } });
  });

  it("no key, a wrong key, a peer off loopback or a request made in process: the API key check as for anyone, the claimed name unread", async () => {
    const cases: [Record<string, string>, string | undefined][] = [
      [{ "x-devmind-by": "root", "x-devmind-reason": "forged" }, "127.0.0.1"],
      [{ "x-devmind-local-owner": `${KEY}x`, "x-devmind-by": "root" }, "127.0.0.1"],
      [{ "x-devmind-local-owner": "", "x-devmind-by": "root" }, "127.0.0.1"],
      [{ "x-devmind-local-owner": KEY, "x-devmind-by": "root" }, "10.1.2.3"],
      [{ "x-devmind-local-owner": KEY, "x-devmind-by": "root" }, undefined],
    ];
    for (const [headers, peer] of cases) {
      expect((await who(headers, peer)).status).toBe(401);
      expect(await who({ ...headers, "x-api-key": "the-api-key" }, peer)).toEqual({ status: 200, body: { principal: "ci", owner: false, keySeen: null } });
    }
  });

  it("a claimed name that is not a short printable one is 400 BAD_REQUEST", async () => {
    for (const by of ["%E0%A4%A", encodeURIComponent("a\nb"), encodeURIComponent("x".repeat(201)), "%20%20"]) {
      const answer = await who({ "x-devmind-local-owner": KEY, "x-devmind-by": by }, "127.0.0.1");
      expect(answer.status, by).toBe(400);
      expect(answer.body["error"]).toBe("BAD_REQUEST");
    }
  });

  it("keys are fresh and long", () => {
    const keys = new Set(Array.from({ length: 20 }, () => newLocalOwnerKey()));
    expect(keys.size).toBe(20);
    for (const key of keys) expect(key).toMatch(/^[\w-]{43}$/);
  });
});
