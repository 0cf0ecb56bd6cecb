import { watch, readFileSync, type FSWatcher } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { DEV_DEFAULTS, GRAPHS_DEFAULTS } from "../constants.js";
import type { GraphEntry } from "../graphs/graph-kinds.js";
import { readLanggraphConfig, type LanggraphConfig } from "../graphs/langgraph-config.js";
import { loadGraphs } from "../graphs/load-graphs.js";
import type { ModuleGenerations } from "../graphs/module-generations.js";
import type { Logger } from "../logger.js";
import type { Runtime } from "../runtime/runtime.js";

/** What `GET /dev/status` answers and the page shows: the graphs served and the last reload. */
export interface DevStatus {
  /** `error`: the last reload failed; the graphs of the last good one are still served. */
  state: "ok" | "error";
  /** The generation of the modules served (1 at start, one more per successful reload). */
  generation: number;
  /** When the last reload (good or not) finished, ISO; null before the first. */
  reloaded_at: string | null;
  /** How long the last reload took, from the change seen to the graphs replaced (or the failure), in ms. */
  reload_ms: number | null;
  /** The files whose change started the last reload. */
  changed: string[];
  /** The runs the last good reload handed over to the new code. */
  handed_over: string[];
  /** Why the last reload failed: the message of the load error (its first lines), and the graph and file. */
  error: { message: string; graph: string | null; file: string | null } | null;
  /** How many project files are watched. */
  watched: number;
}

/** What the reloader needs from the `devmind dev` command. */
export interface DevReloaderDeps {
  /** The langgraph.json of the project. */
  configPath: string;
  runtime: Runtime;
  generations: ModuleGenerations;
  /** The generation the graphs were first loaded under. */
  generation: number;
  /** Variables of the real environment at start: the config's `env` never overrides them. */
  realEnv: ReadonlySet<string>;
  logger: Logger;
  /** A line for the person at the terminal (stdout for reloads, stderr for failures). */
  say: (line: string, failed: boolean) => void;
}

/**
 * Watches a project's graph modules (every project file they import, as the module hooks saw them
 * load), its langgraph.json and its env files; after an edit (debounced), loads the graphs afresh
 * under a new module generation and puts them in place (`runtime.graphs.replace`: running runs
 * continue on the new code from their next checkpoint). A graph that no longer loads (a syntax
 * error, a missing export, a throw at import) leaves the previous graphs serving; the failure is
 * said on stderr and kept in `status()` for the page until a reload succeeds.
 */
export class DevReloader {
  private readonly watchers = new Map<string, FSWatcher>();
  private watched = new Set<string>();
  private pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private firstChangeAt = 0;
  private applied = new Map<string, string>();
  private current: DevStatus;
  private closed = false;

  constructor(private readonly deps: DevReloaderDeps) {
    this.current = { state: "ok", generation: deps.generation, reloaded_at: null, reload_ms: null, changed: [], handed_over: [], error: null, watched: 0 };
  }

  /** Starts watching what generation `deps.generation` loaded; `config` is the project's config as loaded then. */
  async start(config: LanggraphConfig): Promise<void> {
    for (const name of Object.keys(config.env)) if (!this.deps.realEnv.has(name) && process.env[name] !== undefined) this.applied.set(name, process.env[name] as string);
    this.watch(await this.deps.generations.files(this.deps.generation), config);
  }

  status(): DevStatus {
    return { ...this.current, watched: this.watched.size };
  }

  /** Stops watching; a reload under way finishes first. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
    await this.running;
  }

  /** Reloads now (the watcher calls it after an edit); resolves when this and any reload queued behind it are done. */
  async reload(changed: readonly string[]): Promise<void> {
    for (const file of changed) this.pending.add(file);
    if (this.firstChangeAt === 0) this.firstChangeAt = performance.now();
    while (this.running !== undefined) await this.running;
    if (this.pending.size === 0 || this.closed) return;
    const files = [...this.pending];
    const since = this.firstChangeAt;
    this.pending.clear();
    this.firstChangeAt = 0;
    this.running = this.reloadOnce(files, since).finally(() => (this.running = undefined));
    await this.running;
  }

  private async reloadOnce(changed: string[], since: number): Promise<void> {
    const generation = this.deps.generations.next();
    const relative = changed.map((file) => file.replace(`${dirname(this.deps.configPath)}/`, ""));
    const fail = (message: string, graph: string | null, file: string | null): void => {
      const ms = Math.round(performance.now() - since);
      this.current = { ...this.current, state: "error", reloaded_at: new Date().toISOString(), reload_ms: ms, changed: relative, handed_over: [], error: { message, graph, file } };
      this.deps.logger.error({ event: "dev.reload_failed", generation, graph, file, error: message }, "reload failed; the previous graphs are still served");
      this.deps.say(`devmind dev: reload failed after a change to ${relative.join(", ")}: ${message}\ndevmind dev: still serving the previous version of the graphs; fix the error and save again`, true);
    };
    let config: LanggraphConfig;
    try {
      config = readLanggraphConfig(this.deps.configPath);
    } catch (error) {
      return fail(error instanceof Error ? error.message : String(error), null, this.deps.configPath);
    }
    this.applyEnv(config);
    const loaded = await loadGraphs(config.graphs, { generation });
    // what this generation imported is watched, with what was watched before (a file the error is in may import less)
    this.watch(new Set([...this.watched, ...(await this.deps.generations.files(generation))]), config);
    const failed = loaded.find((graph) => graph.error !== undefined);
    if (failed?.error !== undefined) return fail(errorText(failed.error), failed.id, failed.file);
    const graphs: Record<string, GraphEntry | false> = { [GRAPHS_DEFAULTS.builtinId]: false };
    for (const graph of loaded) if (graph.entry !== undefined) graphs[graph.id] = graph.entry;
    let handedOver: string[];
    try {
      handedOver = this.deps.runtime.graphs.replace(graphs);
    } catch (error) {
      return fail(errorText(error), null, null);
    }
    void this.deps.runtime.graphs.warmSchemas();
    const ms = Math.round(performance.now() - since);
    this.current = { state: "ok", generation, reloaded_at: new Date().toISOString(), reload_ms: ms, changed: relative, handed_over: handedOver, error: null, watched: this.watched.size };
    this.deps.logger.info({ event: "dev.reloaded", generation, graphs: loaded.map((graph) => graph.id), reload_ms: ms, handed_over: handedOver }, "graphs reloaded");
    const runs = handedOver.length === 0 ? "" : `; ${handedOver.length} running run${handedOver.length === 1 ? "" : "s"} continue${handedOver.length === 1 ? "s" : ""} on the new code from the next checkpoint`;
    this.deps.say(`devmind dev: reloaded ${loaded.length} graph${loaded.length === 1 ? "" : "s"} in ${ms} ms after a change to ${relative.join(", ")}${runs}`, false);
  }

  /** The config's `env` as it is now: new and changed variables set, removed ones unset (never those of the real environment). */
  private applyEnv(config: LanggraphConfig): void {
    for (const [name, value] of Object.entries(config.env)) {
      if (this.deps.realEnv.has(name)) continue;
      process.env[name] = value;
      this.applied.set(name, value);
    }
    for (const name of [...this.applied.keys()]) {
      if (name in config.env) continue;
      delete process.env[name];
      this.applied.delete(name);
    }
  }

  /** Watches `files` and the config's own files: one watcher per directory (an editor's save by rename is seen too). */
  private watch(files: ReadonlySet<string>, config: LanggraphConfig): void {
    const all = new Set(files);
    all.add(config.path);
    for (const file of envFiles(config)) all.add(file);
    this.watched = all;
    const dirs = new Set([...all].map((file) => dirname(file)));
    for (const dir of dirs) {
      if (this.watchers.has(dir) || this.closed) continue;
      try {
        const watcher = watch(dir, (_event, name) => {
          if (name === null) return;
          const file = join(dir, name.toString());
          if (this.watched.has(file)) this.changed(file);
        });
        watcher.on("error", () => undefined);
        this.watchers.set(dir, watcher);
      } catch {
        // a directory that went away: nothing of it is watched until a reload finds it again
      }
    }
  }

  private changed(file: string): void {
    if (this.closed) return;
    this.pending.add(file);
    if (this.firstChangeAt === 0) this.firstChangeAt = performance.now();
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.reload([]).catch((error: unknown) => this.deps.logger.error({ event: "dev.reload_error", error: errorText(error) }, "reload failed")), DEV_DEFAULTS.reloadDebounceMs);
  }
}

/** The env files of a project: the config's `env` when it names a file, and `.env` beside the config and in the working directory. */
function envFiles(config: LanggraphConfig): string[] {
  const files = [join(config.dir, ".env"), resolve(".env")];
  try {
    const raw = (JSON.parse(readFileSync(config.path, "utf8")) as { env?: unknown }).env;
    if (typeof raw === "string") files.push(resolve(config.dir, raw));
  } catch {
    // an unreadable config is the reload's to report
  }
  return files;
}

/** An error's message with the first lines of its cause (a syntax error's location and text are there). */
export function errorText(error: unknown): string {
  const own = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : "";
  const lines = cause.split("\n").filter((line) => line.trim() !== "" && !own.includes(line.trim())).slice(0, 6);
  return [own, ...lines].join("\n").slice(0, 4_000);
}

