import { register } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { MessageChannel } from "node:worker_threads";
import { DEV_DEFAULTS } from "../constants.js";

/**
 * The generations of a project's modules in this process, for `devmind dev`: generation N of a
 * graph file is imported as `file?devmind-gen=N` and, through the hooks of reload-hooks.ts, every
 * project module it imports is loaded afresh under the same N (packages stay shared). ESM cannot
 * unload a module, so an old generation stays in memory until the process ends: a few hundred
 * kilobytes per reload of a typical project, nothing in a development session.
 */
export interface ModuleGenerations {
  /** A new generation number, to import graph files under (`loadGraphs(specs, { generation })`). */
  next(): number;
  /** The project files (absolute paths) imported under `generation` so far, once every file resolved before the call is told. */
  files(generation: number): Promise<Set<string>>;
}

let tracker: ModuleGenerations | undefined;

/**
 * Registers the module hooks for the project under `root` (once per process: a second call gets the
 * first tracker). Call before any graph file is imported under a generation; the TypeScript hooks
 * (tsx) may come before or after.
 */
export function trackModuleGenerations(root: string): ModuleGenerations {
  if (tracker !== undefined) return tracker;
  const { port1, port2 } = new MessageChannel();
  const seen = new Map<number, Set<string>>();
  const flushes = new Map<number, () => void>();
  let pings = 0;
  port1.on("message", (message: { generation?: number; file?: string; flushed?: number }) => {
    if (typeof message.flushed === "number") {
      flushes.get(message.flushed)?.();
      flushes.delete(message.flushed);
      return;
    }
    if (typeof message.generation !== "number" || typeof message.file !== "string") return;
    let files = seen.get(message.generation);
    if (files === undefined) seen.set(message.generation, (files = new Set()));
    files.add(fileURLToPath(message.file));
  });
  port1.unref();
  const rootUrl = pathToFileURL(root).href.replace(/\/?$/, "/");
  // "../graphs/": the same file from this module and from the CLI bundles in dist/src/cli/
  register(new URL("../graphs/reload-hooks.js", import.meta.url), { data: { root: rootUrl, excluded: [...DEV_DEFAULTS.excludedDirs], port: port2 }, transferList: [port2] });
  let generation = 0;
  tracker = {
    next: () => {
      // generations of earlier reloads are no longer asked about
      for (const old of seen.keys()) if (old < generation) seen.delete(old);
      generation += 1;
      return generation;
    },
    files: async (wanted) => {
      pings += 1;
      const ping = pings;
      // the hooks thread answers in order: every file it told before the answer has arrived
      port1.ref();
      try {
        await new Promise<void>((resolve) => {
          flushes.set(ping, resolve);
          port1.postMessage({ flush: ping });
        });
      } finally {
        if (flushes.size === 0) port1.unref();
      }
      return new Set(seen.get(wanted) ?? []);
    },
  };
  return tracker;
}
