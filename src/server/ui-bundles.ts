import { basename, extname, relative, sep } from "node:path";
import { Hono } from "hono";
import type { UiSpec } from "../graphs/langgraph-config.js";

/** One file of a UI bundle (`entrypoint.js`, `entrypoint.css`). */
export interface UiFile {
  basename: string;
  contents: Uint8Array;
}

/** The bundles of a project's `ui` section, by name (`/ui/{name}`). */
export type UiBundles = ReadonlyMap<string, readonly UiFile[]>;

/**
 * Packages a bundle leaves to the page that renders it (the SDK's `LoadExternalComponent` hands
 * them over), as LangGraph's bundler does; `ui_config.shared` adds to them.
 */
const PAGE_PROVIDED = ["react", "react-dom", "@langchain/langgraph-sdk", "@langchain/langgraph-sdk/react-ui"];

/** What esbuild emits to load an external package in a browser bundle, and what the page provides instead. */
const REQUIRE_SHIM = `typeof require !== "undefined" ? require`;
const PAGE_REQUIRE = `typeof globalThis[Symbol.for("LGUI_REQUIRE")] !== "undefined" ? globalThis[Symbol.for("LGUI_REQUIRE")]`;

/** The global a bundle defines (`__LGUI_<name>`, characters outside [A-Za-z0-9] as `_`), whose `render` the page calls. */
export function uiGlobalName(name: string): string {
  return `__LGUI_${name.replace(/[^a-zA-Z0-9]/g, "_")}`;
}

/**
 * The entry module of a bundle: the user's module (default export: components by name) and a
 * `render(name, shadowRootId)` that gives the named component and a fresh element inside the
 * page's shadow root to the page's component store (the SDK's protocol for external components).
 */
function entrySource(importPath: string): string {
  return [
    `import components from ${JSON.stringify(importPath)};`,
    `export function render(name, shadowRootId) {`,
    `  const root = document.getElementById(shadowRootId).shadowRoot;`,
    `  const element = document.createElement("div");`,
    `  root.appendChild(element);`,
    `  window[Symbol.for("LGUI_EXT_STORE")].respond(shadowRootId, components[name], element);`,
    `}`,
  ].join("\n");
}

/** What building gives: the bundles built, and a warning per `ui` entry that could not be built. */
export interface UiBuildResult {
  bundles: UiBundles;
  warnings: string[];
}

/**
 * Bundles each `ui` module of langgraph.json for the browser with esbuild (what LangGraph's server
 * does at start): one IIFE defining `uiGlobalName(name)`, JSX automatic, React and the SDK left to
 * the page, CSS the module imports emitted next to it. `cwd` is the config's directory (module
 * paths must lie inside it). An entry that cannot be built (esbuild missing, a syntax error, an
 * import that does not resolve) is left out with a warning: `/ui/{name}` then answers 404 while
 * the rest of the server works.
 */
export async function buildUiBundles(specs: readonly UiSpec[], options: { cwd: string; shared?: readonly string[] }): Promise<UiBuildResult> {
  const bundles = new Map<string, UiFile[]>();
  const warnings: string[] = [];
  if (specs.length === 0) return { bundles, warnings };
  let esbuild: typeof import("esbuild");
  try {
    esbuild = await import("esbuild");
  } catch (error) {
    return { bundles, warnings: specs.map((spec) => `ui.${spec.name}: not served: esbuild could not be loaded (${firstLine(error)})`) };
  }
  for (const spec of specs) {
    const inside = relative(options.cwd, spec.file);
    if (inside.startsWith("..") || inside === "") {
      warnings.push(`ui.${spec.name}: not served: ${spec.file} is outside the project directory ${options.cwd}`);
      continue;
    }
    try {
      const result = await esbuild.build({
        stdin: { contents: entrySource(`./${inside.split(sep).join("/")}`), resolveDir: options.cwd, sourcefile: "entrypoint.tsx", loader: "tsx" },
        outdir: options.cwd,
        entryNames: "entrypoint",
        write: false,
        bundle: true,
        format: "iife",
        platform: "browser",
        target: "es2020",
        jsx: "automatic",
        external: [...PAGE_PROVIDED, ...(options.shared ?? [])],
        globalName: uiGlobalName(spec.name),
        logLevel: "silent",
      });
      const files = result.outputFiles.map((file): UiFile => {
        const name = basename(file.path);
        const contents = extname(name) === ".js" ? new TextEncoder().encode(file.text.replaceAll(REQUIRE_SHIM, PAGE_REQUIRE)) : file.contents;
        return { basename: name, contents };
      });
      bundles.set(spec.name, files);
    } catch (error) {
      const first = (error as { errors?: { text?: string; location?: { file?: string; line?: number } | null }[] }).errors?.[0];
      const why = first?.text === undefined ? firstLine(error) : `${first.text}${first.location?.file === undefined ? "" : ` (${first.location.file}:${first.location.line ?? "?"})`}`;
      warnings.push(`ui.${spec.name}: not served: bundling ${spec.file} failed: ${why}`);
    }
  }
  return { bundles, warnings };
}

const CONTENT_TYPES: Record<string, string> = { ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".map": "application/json" };

/**
 * `GET /ui/{name}/{file}`: a bundle's files (LangGraph serves them without auth, since a page's
 * `<script>` and `<link>` carry no key). Mount before the API key check.
 */
export function uiAssetRoutes(bundles: UiBundles): Hono {
  const app = new Hono();
  app.get("/ui/:name/:file", (c) => {
    const file = bundles.get(c.req.param("name"))?.find((item) => item.basename === c.req.param("file"));
    if (file === undefined) return c.json({ error: "NOT_FOUND", message: "no such UI file" }, 404);
    return c.body(file.contents as unknown as ArrayBuffer, 200, { "content-type": CONTENT_TYPES[extname(file.basename)] ?? "application/octet-stream" });
  });
  return app;
}

/**
 * `POST /ui/{name}` with `{"name": COMPONENT}` (the SDK's `client["~ui"].getComponent`): the HTML
 * that loads the bundle into the page (its CSS links, then its script, whose `onload` renders the
 * component into the element `{{shadowRootId}}` the page substitutes), as LangGraph's server
 * answers. URLs are absolute on this server's `Host`. Mount after the API key check.
 */
export function uiComponentRoutes(bundles: UiBundles): Hono {
  const app = new Hono();
  app.post("/ui/:name", async (c) => {
    const name = c.req.param("name");
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      body = undefined;
    }
    const component = (body as { name?: unknown } | undefined)?.name;
    if (typeof component !== "string") return c.json({ error: "REQUEST_INVALID", message: 'expected a JSON body {"name": COMPONENT}' }, 422);
    const files = bundles.get(name);
    if (files === undefined || files.length === 0) return c.json({ error: "NOT_FOUND", message: `no UI for ${JSON.stringify(name.slice(0, 100))}` }, 404);
    const host = c.req.header("host") ?? "";
    const hostname = host.replace(/:\d+$/, "");
    // as LangGraph: local hosts get http:, any other a protocol-relative URL (the page's own scheme)
    const scheme = hostname === "localhost" || hostname === "127.0.0.1" ? "http:" : "";
    const base = `${scheme}//${host}/ui/${encodeURIComponent(name)}`;
    const html: string[] = [];
    for (const css of files.filter((file) => extname(file.basename) === ".css")) html.push(`<link rel="stylesheet" href="${base}/${css.basename}" />`);
    const js = files.find((file) => extname(file.basename) === ".js");
    if (js !== undefined) html.push(`<script src="${base}/${js.basename}" onload='${uiGlobalName(name)}.render(${escapeForAttribute(JSON.stringify(component))}, "{{shadowRootId}}")'></script>`);
    return c.body(html.join("\n"), 200, { "content-type": "text/html; charset=utf-8" });
  });
  return app;
}

/** A JSON string inside a single-quoted HTML attribute: its `'`, `&` and `<` escaped. */
function escapeForAttribute(json: string): string {
  return json.replaceAll("&", "&amp;").replaceAll("'", "&#39;").replaceAll("<", "&lt;");
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return (text.split("\n")[0] ?? "").slice(0, 300);
}
