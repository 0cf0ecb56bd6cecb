import { Hono } from "hono";
import { loadWebAssets, type WebAsset } from "./web-assets.js";

/**
 * Content-Security-Policy of the page: scripts, styles and fetches from this origin only, no inline
 * script or style, no plugins, not framable. Images may also be `blob:` URLs, which is how the page
 * shows attachments fetched with the API key header.
 */
export const WEB_PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Headers every page response carries, besides its content type and validator. */
export const WEB_PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": WEB_PAGE_CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  // the files are not fingerprinted: the browser may keep them but must revalidate (ETag) each time
  "cache-control": "no-cache",
};

/**
 * The web page at `/` (CONTRACT section 8) as a Hono sub-app: `GET /` (the HTML) and its fixed set
 * of assets under `/assets/`. Mount it on the server's app (`app.route("/", webRoutes())`); it
 * needs no API key: the page asks the user for one and sends it on its own API calls.
 *
 * Only the paths of the asset table are routed, so no request path is ever mapped onto the file
 * system; anything else falls through to the parent app's 404. The files are read once, here.
 */
export function webRoutes(options: { assets?: WebAsset[] } = {}): Hono {
  const assets = options.assets ?? loadWebAssets();
  const app = new Hono();
  for (const asset of assets) {
    app.get(asset.path, (c) => {
      const headers = { ...WEB_PAGE_HEADERS, "content-type": asset.contentType, etag: asset.etag };
      if (matchesEtag(c.req.header("if-none-match"), asset.etag)) return c.body(null, 304, headers);
      return c.body(asset.body, 200, headers);
    });
  }
  return app;
}

/** True when an `If-None-Match` header lists `etag` (or `*`). */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(",").some((tag) => {
    const trimmed = tag.trim();
    return trimmed === "*" || trimmed === etag || trimmed === `W/${etag}`;
  });
}
