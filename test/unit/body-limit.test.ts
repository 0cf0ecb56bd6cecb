import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { requestBodyLimit } from "../../src/server/body-limit.js";

function app(maxSize: number): Hono {
  const hono = new Hono();
  hono.use("*", requestBodyLimit({ maxSize, onError: (c) => c.json({ error: "too large" }, 413) }));
  hono.all("/echo", async (c) => c.json({ method: c.req.method, body: c.req.method === "GET" ? null : await c.req.text() }));
  return hono;
}

/** A body of unknown length: a stream, sent chunked, with no Content-Length. */
function streamed(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 4) controller.enqueue(bytes.subarray(at, at + 4));
      controller.close();
    },
  });
}

describe("requestBodyLimit", () => {
  it("passes a GET and a body within the limit, which the route still reads whole", async () => {
    expect(await (await app(16).request("/echo")).json()).toEqual({ method: "GET", body: null });
    const within = await app(16).request("/echo", { method: "POST", body: "0123456789", headers: { "content-length": "10" } });
    expect(within.status).toBe(200);
    expect(await within.json()).toEqual({ method: "POST", body: "0123456789" });
  });

  it("refuses a body whose Content-Length is over the limit without reading it", async () => {
    const over = await app(8).request("/echo", { method: "POST", body: "0123456789", headers: { "content-length": "10" } });
    expect(over.status).toBe(413);
    expect(await over.json()).toEqual({ error: "too large" });
  });

  it("counts a body of unknown length as it arrives: within the limit it reaches the route, over it is refused", async () => {
    const init = (text: string): RequestInit => ({ method: "POST", body: streamed(text), duplex: "half" }) as RequestInit;
    const within = await app(16).request("/echo", init("0123456789"));
    expect(await within.json()).toEqual({ method: "POST", body: "0123456789" });
    const over = await app(8).request("/echo", init("0123456789"));
    expect(over.status).toBe(413);
  });
});
