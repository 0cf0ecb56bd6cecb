import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { AppDeps } from "../../src/server/app.js";
import type { StartServerOptions } from "../../src/server/start-server.js";

/**
 * The seam above src/runtime (issue 11 item 7): the CLI (src/cli) and the server (src/server)
 * reach runs, threads, files and the database only through the Runtime API. They may import each
 * other's files, packages other than the database drivers, and — from the rest of src — only the
 * modules below: the Runtime API itself, pure helpers that never touch the database, and the
 * public library functions that open and migrate a database (also exported by src/index.ts).
 */
const ALLOWED: Record<string, string> = {
  "runtime/runtime.ts": "the Runtime API (createRuntime, Runtime, the types it returns)",
  "runtime/queue/run-record.ts": "pure: checkRunId, isRunStatus, RUN_STATUSES, run record types",
  "runtime/events/run-events.ts": "pure: isKnownRunEvent and the event union (re-exported by runtime.ts; imported directly so the CLI starts without loading the runtime)",
  "runtime/threads/thread-state.ts": "pure: checkpointIdOf",
  "runtime/execution/backoff.ts": "pure: retryDatabaseFaults, isDatabaseFault",
  "db/open-database.ts": "public library function openDatabase (src/index.ts)",
  "db/migrate.ts": "public library functions migrate, migrationStatus (src/index.ts)",
  "db/types.ts": "public types (src/index.ts); type-only imports",
  "config.ts": "configuration",
  "config-schema.ts": "configuration",
  "constants.ts": "constants (channel names excepted, see FORBIDDEN_TEXT)",
  "errors.ts": "errors",
  "logger.ts": "logging",
  "secret-redaction.ts": "redaction",
  "version.ts": "version",
  "sleep.ts": "pure: the one abortable sleep",
  "runtime/threads/threads-api.ts": "the ThreadsApi type of the Runtime API; type-only imports",
  "db/lock-file.ts": "pure: reads who holds the embedded data directory's lock file (a local server's URL), no database access",
  "graph/tool-call-chunks.ts": "pure: joins a message's tool-call chunks",
  "operations/operations.ts": "metrics, traces, LangSmith: observers of the runtime built where the runtime is (open-runtime), given the database as createRuntime is (its one queue-gauge statement lives in src/operations/metrics/sql.ts)",
  "operations/metrics/metrics-endpoint.ts": "the /metrics exposition and its key rule (no database access of its own)",
  "operations/metrics/metrics-access.ts": "pure: who may scrape /metrics",
  "operations/metrics/metrics-server.ts": "the worker's --metrics-port listener over a MetricsEndpoint",
};
/** Whole directories of src that never touch the database: the model, graph loading, the vocabulary every layer shares (decisions, HITL shapes, events, stop reasons), and the event protocol's pure projection (command schema, filters, positions, parts). */
const ALLOWED_DIRS = ["model/", "graphs/", "vocabulary/", "runtime/protocol/"];
/** Modules the CLI and the server may import only as types. */
const TYPE_ONLY = new Set(["db/types.ts", "runtime/threads/threads-api.ts"]);
/** Database drivers: only src/db talks to them. */
const FORBIDDEN_PACKAGES = ["pg", "pg-pool", "@electric-sql/pglite"];
/** Notification channels, LISTEN/NOTIFY and SQL belong to src/runtime and src/db. */
const FORBIDDEN_TEXT: { pattern: RegExp; what: string }[] = [
  { pattern: /\b(RUNS_CHANNEL|RUN_EVENTS_CHANNEL|MODEL_DELTAS_CHANNEL|LIVE_MESSAGES_CHANNEL)\b/, what: "a notification channel" },
  { pattern: /\b(subscribeModelDeltas|LiveDeltaPublisher|subscribeLiveMessages|LiveMessagePublisher|notify\(|pg_notify)\b|\.listen\(/, what: "LISTEN/NOTIFY" },
  { pattern: /\b(SELECT\s+[\w*"]|INSERT\s+INTO|UPDATE\s+\S+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX)|FOR\s+UPDATE)\b/, what: "SQL" },
  { pattern: /\b(RunStore|EventStore|DecisionStore|AttachmentStore|ThreadStore|ToolLedger|PostgresCheckpointSaver)\b/, what: "a store class" },
];

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const src = join(root, "src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

interface ImportSite {
  file: string;
  specifier: string;
  typeOnly: boolean;
}

/** Static imports and re-exports (`import x from`, `import type`, `export ... from`, side-effect imports) and dynamic `import()`. */
function importsOf(file: string): ImportSite[] {
  const text = readFileSync(file, "utf8");
  const sites: ImportSite[] = [];
  const fromClause = /^\s*(import|export)\s+(type\s+)?([^;]*?)\s+from\s+["']([^"']+)["']/gms;
  for (const match of text.matchAll(fromClause)) {
    const names = match[3] ?? "";
    // `import { type A, type B }` is type-only too
    const allTyped = /^\{[^}]*\}$/s.test(names.trim()) && names.replace(/[{}\s]/g, "").split(",").filter(Boolean).every((name) => name.startsWith("type"));
    sites.push({ file, specifier: match[4] as string, typeOnly: match[2] !== undefined || allTyped });
  }
  for (const match of text.matchAll(/^\s*import\s+["']([^"']+)["']/gm)) sites.push({ file, specifier: match[1] as string, typeOnly: false });
  for (const match of text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) sites.push({ file, specifier: match[1] as string, typeOnly: false });
  return sites;
}

/** Why an import breaks the seam, or null when it is allowed. */
function violation(site: ImportSite): string | null {
  const { specifier } = site;
  if (!specifier.startsWith(".")) {
    const bare = specifier.replace(/^node:/, "");
    if (builtinModules.includes(bare) || builtinModules.includes(bare.split("/")[0] as string)) return null;
    const name = specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : (specifier.split("/")[0] as string);
    return FORBIDDEN_PACKAGES.includes(name) ? `the database driver ${name}` : null;
  }
  const target = relative(src, resolve(dirname(site.file), specifier)).replace(/\\/g, "/").replace(/\.js$/, ".ts");
  if (target.startsWith("..")) return `a file outside src (${target})`;
  if (target.startsWith("cli/") || target.startsWith("server/")) return null;
  if (ALLOWED_DIRS.some((dir) => target.startsWith(dir))) return null;
  if (ALLOWED[target] === undefined) return `src/${target}, which is not on the seam's allow list`;
  if (TYPE_ONLY.has(target) && !site.typeOnly) return `src/${target} as a value (types only)`;
  return null;
}

const seamFiles = [...sourceFiles(join(src, "cli")), ...sourceFiles(join(src, "server"))];

describe("the seam above src/runtime", () => {
  it("finds the CLI's and the server's sources", () => {
    const names = seamFiles.map((file) => relative(src, file).replace(/\\/g, "/"));
    expect(names).toContain("cli/main.ts");
    expect(names).toContain("server/app.ts");
    expect(names).toContain("server/routes/devmind-routes.ts");
    // every file imports something: the scanner reads them
    expect(seamFiles.flatMap(importsOf).length).toBeGreaterThan(seamFiles.length);
  });

  it("src/cli and src/server import only the Runtime API, pure helpers and the public database functions", () => {
    const broken = seamFiles.flatMap(importsOf).flatMap((site) => {
      const why = violation(site);
      return why === null ? [] : [`${relative(root, site.file)} imports ${site.specifier}: ${why}`];
    });
    expect(broken).toEqual([]);
  });

  it("src/cli and src/server name no notification channel, LISTEN/NOTIFY helper, SQL or store class", () => {
    const found = seamFiles.flatMap((file) => {
      const lines = readFileSync(file, "utf8").split("\n");
      return lines.flatMap((line, index) =>
        FORBIDDEN_TEXT.filter(({ pattern }) => pattern.test(line)).map(({ what }) => `${relative(root, file)}:${index + 1}: ${what}: ${line.trim().slice(0, 120)}`),
      );
    });
    expect(found).toEqual([]);
  });

  it("the scanner catches what it forbids", () => {
    const file = join(src, "cli", "example.ts");
    const verdict = (specifier: string, typeOnly = false): string | null => violation({ file, specifier, typeOnly });
    expect(verdict("../runtime/interrupts/decision-store.js")).toMatch(/not on the seam's allow list/);
    expect(verdict("../runtime/events/event-sql.js")).toMatch(/not on the seam's allow list/);
    expect(verdict("../db/channels.js")).toMatch(/not on the seam's allow list/);
    expect(verdict("../db/types.js")).toMatch(/types only/);
    expect(verdict("pg")).toMatch(/database driver/);
    expect(verdict("@electric-sql/pglite/worker")).toMatch(/database driver/);
    expect(verdict("../db/types.js", true)).toBeNull();
    expect(verdict("../runtime/runtime.js")).toBeNull();
    expect(verdict("./open-runtime.js")).toBeNull();
    expect(verdict("../server/start-server.js")).toBeNull();
    expect(verdict("node:fs")).toBeNull();
    expect(verdict("hono/streaming")).toBeNull();
    expect(FORBIDDEN_TEXT.some(({ pattern }) => pattern.test("await db.listen(RUNS_CHANNEL, wake)"))).toBe(true);
    expect(FORBIDDEN_TEXT.some(({ pattern }) => pattern.test("`UPDATE runs SET status = 'x'`"))).toBe(true);
    expect(FORBIDDEN_TEXT.some(({ pattern }) => pattern.test("const status = c.req.query(\"status\");"))).toBe(false);
  });

  it("the server depends on the runtime and the config, never on the database", () => {
    expectTypeOf<keyof AppDeps>().toEqualTypeOf<"runtime" | "config" | "shutdown" | "logger" | "heartbeatMs" | "http" | "ui" | "selfUrl" | "auth" | "dev" | "metrics" | "traceContext" | "localOwnerKey">();
    expectTypeOf<StartServerOptions>().not.toHaveProperty("db");
    expect(Object.keys(ALLOWED).every((module) => !module.startsWith("cli/") && !module.startsWith("server/"))).toBe(true);
  });
});
