/**
 * The example frontend examples/react-chat for browser tests: built once with the repository's
 * Vite (its config: React's automatic JSX runtime through Vite's own transform, no plugin) and
 * served as static files from a loopback port. The page reads the server it talks to from its
 * query (`?apiUrl=&assistantId=&apiKey=&thread=`), so one build serves every target.
 */
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { extname, join, normalize } from "node:path";
import { build } from "vite";
import { REPO_ROOT } from "../setup/build-outputs.js";

/** The example's directory. */
export const REACT_CHAT_DIR = join(REPO_ROOT, "examples", "react-chat");

/** Builds the example into `outDir` (Vite's production build; quiet but for errors). */
export async function buildReactChat(outDir: string): Promise<void> {
  await build({ configFile: join(REACT_CHAT_DIR, "vite.config.ts"), root: REACT_CHAT_DIR, logLevel: "error", build: { outDir, emptyOutDir: true } });
}

const TYPES: Record<string, string> = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml" };

/** A static file server of a built app on 127.0.0.1 (any unknown path answers index.html). */
export interface StaticServer {
  url: string;
  stop(): Promise<void>;
}

/** Serves `dir` on a free loopback port. */
export async function serveStatic(dir: string): Promise<StaticServer> {
  const server: Server = createServer((request, response) => {
    const path = normalize(decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname)).replace(/^(\.\.[/\\])+/, "");
    const file = path === "/" || extname(path) === "" ? "index.html" : path;
    readFile(join(dir, file))
      .then((body) => response.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" }).end(body))
      .catch(() => response.writeHead(404).end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (typeof address !== "object" || address === null) throw new Error("the static server has no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
