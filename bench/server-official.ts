import { cpSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CONFORMANCE } from "./conformance/conformance-constants.js";
import { installWorkspace } from "./conformance/workspace.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));

/** The graphs both servers serve (this directory: devmind reads it in place, the official server a copy). */
export const BENCH_GRAPHS_DIR = join(REPO, "bench", "server-graphs");

/**
 * Where the official server is installed: under node_modules (git ignores it, `npm ci` clears it),
 * reused while its package.json is unchanged. Installing it as a devDependency instead would put
 * a second TypeScript (5.x, its peer) and ~140 packages into every `npm ci` of devmind.
 */
export const OFFICIAL_DIR = join(REPO, "node_modules", ".cache", "devmind-bench-official");

/** Packages pinned to devmind's own versions, so the official server runs the same LangGraph, core and SDK. */
const PINNED = ["@langchain/core", "@langchain/langgraph", "@langchain/langgraph-checkpoint", "@langchain/langgraph-sdk", "zod", "hono", "tsx"] as const;

/** The install directory's package.json: the official server at CONFORMANCE.officialApiVersion, LangGraph at devmind's versions. */
function officialPackageJson(): Record<string, unknown> {
  const devmind = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
  const versions = { ...devmind.devDependencies, ...devmind.dependencies };
  const dependencies: Record<string, string> = {
    "@langchain/langgraph-api": CONFORMANCE.officialApiVersion,
    typescript: CONFORMANCE.officialTypescriptVersion,
  };
  for (const name of PINNED) {
    const version = versions[name];
    if (version === undefined) throw new Error(`devmind's package.json has no ${name}`);
    dependencies[name] = version;
  }
  return { name: "devmind-bench-official", private: true, type: "module", dependencies };
}

/**
 * Installs the official in-memory server into OFFICIAL_DIR unless the same package.json is already
 * installed there, and copies the bench graphs beside it (so they import its copy of LangGraph).
 * Returns the copied langgraph.json's path.
 */
export async function prepareOfficial(log: (line: string) => void): Promise<string> {
  mkdirSync(OFFICIAL_DIR, { recursive: true });
  const wanted = `${JSON.stringify(officialPackageJson(), null, 2)}\n`;
  const packagePath = join(OFFICIAL_DIR, "package.json");
  const installed = existsSync(packagePath) && existsSync(join(OFFICIAL_DIR, "node_modules", "@langchain", "langgraph-api")) ? readFileSync(packagePath, "utf8") : "";
  if (installed !== wanted) {
    log(`installing @langchain/langgraph-api ${CONFORMANCE.officialApiVersion} into ${OFFICIAL_DIR} (once; about 30 s with a warm npm cache)`);
    const started = Date.now();
    await installWorkspace(OFFICIAL_DIR, JSON.parse(wanted) as Record<string, unknown>, join(OFFICIAL_DIR, "install.log"));
    log(`installed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  const graphs = join(OFFICIAL_DIR, "graphs");
  cpSync(BENCH_GRAPHS_DIR, graphs, { recursive: true });
  return join(graphs, "langgraph.json");
}
