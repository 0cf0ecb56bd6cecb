import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DevmindError } from "../../errors.js";

/** One static file of the web page, read once at startup. */
export interface WebAsset {
  /** URL path the asset is served at, e.g. `/assets/app.js`. */
  path: string;
  contentType: string;
  body: string;
  /** Strong validator for `If-None-Match`, derived from the content. */
  etag: string;
}

/** The files of the page: URL path, file name under `src/server/web/assets/`, content type. */
export const WEB_ASSET_FILES = [
  { path: "/", file: "index.html", contentType: "text/html; charset=utf-8" },
  { path: "/assets/app.js", file: "app.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/assets/api.js", file: "api.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/assets/dom.js", file: "dom.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/assets/dev-status.js", file: "dev-status.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/assets/graph-layout.js", file: "graph-layout.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/assets/graph-paths.js", file: "graph-paths.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/assets/graph-view.js", file: "graph-view.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/assets/hitl-panel.js", file: "hitl-panel.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/assets/hitl-shape.js", file: "hitl-shape.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/assets/interrupts.js", file: "interrupts.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/assets/json-tree.js", file: "json-tree.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/assets/run-label.js", file: "run-label.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/assets/run-list.js", file: "run-list.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/assets/run-status.js", file: "run-status.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/assets/input-form.js", file: "input-form.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/assets/input-form-view.js", file: "input-form-view.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/assets/run-nodes.js", file: "run-nodes.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/assets/run-view.js", file: "run-view.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/assets/sse.js", file: "sse.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/assets/tool-line.js", file: "tool-line.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/assets/app.css", file: "app.css", contentType: "text/css; charset=utf-8" },
  { path: "/assets/icon.svg", file: "icon.svg", contentType: "image/svg+xml" },
] as const;

/** Where the asset files live relative to the package root, in the source tree and in the package. */
const ASSETS_DIR = join("src", "server", "web", "assets");

/**
 * Finds `src/server/web/assets/` from this module, whether it runs from `src/server/web` (tsx,
 * tests) or from `dist/src/server/web` (the built `devmind` bin): walk up to the package root
 * (the folder with package.json) and look there. The folder ships in the npm package ("files").
 */
export function defaultWebAssetsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth += 1) {
    const candidate = join(dir, ASSETS_DIR);
    if (existsSync(join(dir, "package.json")) && existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new DevmindError("WEB_ASSETS_MISSING", `cannot find the devmind web page files (${ASSETS_DIR}) next to package.json`);
}

/**
 * Reads every asset of the page into memory, so serving never touches the file system and no
 * request path ever reaches a file name (the routes are a fixed table, not a directory).
 */
export function loadWebAssets(dir: string = defaultWebAssetsDir()): WebAsset[] {
  return WEB_ASSET_FILES.map(({ path, file, contentType }) => {
    const full = join(dir, file);
    if (!existsSync(full)) throw new DevmindError("WEB_ASSETS_MISSING", `web page file ${file} is missing from ${dir}`);
    const body = readFileSync(full, "utf8");
    return { path, contentType, body, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"` };
  });
}
