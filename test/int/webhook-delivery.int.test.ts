import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { postWebhook } from "../../src/webhooks/webhook-delivery.js";
import { webhookPolicy } from "../../src/webhooks/webhook-targets.js";

describe("one webhook POST (real loopback servers, no database)", () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    })));
  });
  /** A loopback HTTP server answering with `handler`; closed after each test. */
  const serve = async (handler: Parameters<typeof createServer>[1]): Promise<string> => {
    const server = createServer(handler);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const policy = webhookPolicy();

  it("2xx is delivered; 404 and a redirect are final; 429 and 5xx may be retried", async () => {
    const statuses = [204, 404, 302, 429, 502];
    const seen: string[] = [];
    const url = await serve((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        seen.push(`${req.method} ${req.headers["content-type"]} ${Buffer.concat(chunks).toString("utf8")}`);
        const status = statuses[seen.length - 1]!;
        res.writeHead(status, status === 302 ? { location: "http://10.0.0.1/" } : {}).end();
      });
    });
    const results = [];
    for (let i = 0; i < statuses.length; i += 1) results.push(await postWebhook(policy, `${url}/hook`, JSON.stringify({ n: i }), 2_000));
    expect(results).toEqual([
      { ok: true, status: 204 },
      { ok: false, retry: false, error: "HTTP 404" },
      { ok: false, retry: false, error: "HTTP 302" },
      { ok: false, retry: true, error: "HTTP 429" },
      { ok: false, retry: true, error: "HTTP 502" },
    ]);
    expect(seen).toEqual(statuses.map((_, i) => `POST application/json {"n":${i}}`));
  });

  it("a target that never finishes answering is cut at the timeout, and may be retried", async () => {
    // headers at once, then the body never ends: the socket is not silent long, the whole exchange is
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("partial");
    });
    const started = Date.now();
    const result = await postWebhook(policy, url, "{}", 300);
    expect(result).toMatchObject({ ok: false, retry: true });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("a listed name that resolves outside the allowed ranges is refused before connecting", async () => {
    let requests = 0;
    const url = await serve((_req, res) => {
      requests += 1;
      res.end();
    });
    const result = await postWebhook(webhookPolicy(["localhost"]), url.replace("127.0.0.1", "localhost"), "{}", 1_000);
    expect(result).toMatchObject({ ok: false, retry: false, refused: true });
    expect(requests).toBe(0);
  });
});
