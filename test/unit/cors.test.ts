import { Hono, type MiddlewareHandler } from "hono";
import { cors as honoCors } from "hono/cors";
import { describe, expect, it } from "vitest";
import { corsHeaders, everyResponseHeader, type CorsOptions } from "../../src/server/cors.js";

const OPTIONS: Record<string, CorsOptions> = {
  "the server's default": { origin: "*", allowHeaders: ["content-type", "x-api-key"], exposeHeaders: ["content-location", "x-request-id"], allowMethods: ["GET", "POST"], maxAge: 600 },
  "an origin list with credentials": { origin: ["https://a.example", "https://b.example"], credentials: true, exposeHeaders: ["x-request-id"] },
  "one origin": { origin: "https://a.example" },
  "an origin function (allow_origin_regex)": { origin: (origin: string) => (/\.example$/.test(origin) ? origin : undefined) },
};

/** An app with `middleware` in front of routes that answer through Hono and one that makes its own Response. */
function appWith(middleware: MiddlewareHandler): Hono {
  const app = new Hono();
  app.use("*", middleware);
  app.get("/json", (c) => {
    c.header("Content-Location", "/json");
    return c.json({ ok: true });
  });
  app.get("/own", () => new Response("made here", { headers: { "x-own": "1" } }));
  app.post("/fails", () => {
    throw new Error("boom");
  });
  app.onError((_error, c) => c.json({ error: "INTERNAL" }, 500));
  return app;
}

/** The CORS and Vary headers of a response, by lower-case name. */
function corsOf(response: Response): Record<string, string> {
  const out: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name.startsWith("access-control-") || name === "vary") out[name] = value;
  });
  return out;
}

describe("corsHeaders: Hono's cors headers without copying every response", () => {
  for (const [label, options] of Object.entries(OPTIONS)) {
    it(`answers as Hono's cors does: ${label}`, async () => {
      const ours = appWith(corsHeaders(options));
      const hono = appWith(honoCors(options));
      const requests: [string, RequestInit][] = [];
      for (const origin of ["https://a.example", "https://b.example", "https://evil.test", undefined]) {
        const headers: Record<string, string> = origin === undefined ? {} : { origin };
        requests.push(["/json", { headers }], ["/own", { headers }], ["/fails", { method: "POST", headers }], ["/missing", { headers }]);
        requests.push(["/json", { method: "OPTIONS", headers: { ...headers, "access-control-request-method": "POST", "access-control-request-headers": "content-type, x-custom" } }]);
      }
      for (const [path, init] of requests) {
        const [mine, theirs] = [await ours.request(path, init), await hono.request(path, init)];
        expect({ path, method: init.method, status: mine.status, cors: corsOf(mine) }).toEqual({ path, method: init.method, status: theirs.status, cors: corsOf(theirs) });
        expect(await mine.text()).toBe(await theirs.text());
      }
    });
  }

  it("keeps the route's own headers and adds the CORS ones to a Response the route made itself", async () => {
    const app = appWith(corsHeaders(OPTIONS["an origin list with credentials"] as CorsOptions));
    const own = await app.request("/own", { headers: { origin: "https://b.example" } });
    expect(own.headers.get("x-own")).toBe("1");
    expect(own.headers.get("access-control-allow-origin")).toBe("https://b.example");
    expect(own.headers.get("access-control-allow-credentials")).toBe("true");
    const json = await app.request("/json", { headers: { origin: "https://a.example" } });
    expect(json.headers.get("content-location")).toBe("/json");
    expect(json.headers.get("access-control-expose-headers")).toBe("x-request-id");
  });
});

describe("everyResponseHeader", () => {
  it("puts a fresh value on every response: through Hono, a route's own Response, an error, a 404", async () => {
    let n = 0;
    const app = appWith(everyResponseHeader("x-request-id", () => `id-${(n += 1)}`));
    const seen: (string | null)[] = [];
    for (const [path, method] of [["/json", "GET"], ["/own", "GET"], ["/fails", "POST"], ["/missing", "GET"]] as const) {
      seen.push((await app.request(path, { method })).headers.get("x-request-id"));
    }
    expect(seen).toEqual(["id-1", "id-2", "id-3", "id-4"]);
  });
});
