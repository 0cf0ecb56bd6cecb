/**
 * Node module hooks (`module.register`) for `devmind dev`, run on Node's hooks thread: a module of
 * the project (a file under the project directory, outside node_modules and the excluded
 * directories) imported by a module of generation N (its URL carries `?devmind-gen=N`) is
 * resolved to its URL with the same query. So importing a graph file as `file.ts?devmind-gen=N`
 * loads it and every project module it imports afresh, while LangGraph, LangChain and every
 * package resolve to the copies the process already has (one copy: `instanceof` holds). Each
 * project file resolved is told to the main thread (`{ generation, file }`) so it can be watched.
 */
import type { MessagePort } from "node:worker_threads";
import { DEV_DEFAULTS } from "../constants.js";

const PARAM = DEV_DEFAULTS.generationParam;

/** What the main thread gives at registration. */
interface HookData {
  /** The project directory as a file URL ending in `/`. */
  root: string;
  /** Directory names under the root whose modules are never reloaded (node_modules, .devmind, dist). */
  excluded: string[];
  port: MessagePort;
}

let state: HookData | undefined;

/** Takes the data of `module.register`; answers `{ flush }` pings in order, after every file told before it. */
export function initialize(data: HookData): void {
  state = data;
  data.port.on("message", (message: { flush?: number }) => {
    if (typeof message.flush === "number") data.port.postMessage({ flushed: message.flush });
  });
  data.port.unref();
}

function generationOf(url: string | undefined): string | null {
  if (url === undefined || !url.startsWith("file:")) return null;
  const query = url.indexOf("?");
  return query < 0 ? null : new URLSearchParams(url.slice(query + 1)).get(PARAM);
}

function isProjectFile(url: string, hooks: HookData): boolean {
  if (!url.startsWith(hooks.root)) return false;
  const path = url.slice(hooks.root.length).split("?")[0] ?? "";
  const parts = path.split("/");
  return !parts.includes("node_modules") && !hooks.excluded.includes(parts[0] ?? "");
}

type Resolved = { url: string; format?: string | null | undefined; shortCircuit?: boolean | undefined; importAttributes?: Record<string, string> };

/** Gives a project module imported by a module of generation N the same generation. */
export async function resolve(specifier: string, context: { parentURL?: string | undefined }, nextResolve: (specifier: string, context: unknown) => Promise<Resolved>): Promise<Resolved> {
  const resolved = await nextResolve(specifier, context);
  const hooks = state;
  if (hooks === undefined || !isProjectFile(resolved.url, hooks)) return resolved;
  const generation = generationOf(resolved.url) ?? generationOf(context.parentURL);
  if (generation === null) return resolved;
  const bare = resolved.url.split("?")[0] as string;
  hooks.port.postMessage({ generation: Number(generation), file: bare });
  if (generationOf(resolved.url) !== null) return resolved;
  return { ...resolved, url: `${bare}?${PARAM}=${generation}` };
}
