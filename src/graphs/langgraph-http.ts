import { isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { ConfigError } from "../errors.js";

/** The module and export a `"./path.ts:export"` reference names (an http app, a graph). */
export interface ModuleReference {
  /** As written in the file. */
  source: string;
  /** Absolute path of the module. */
  file: string;
  /** The export (`default` when the reference names none). */
  exportName: string;
}

/** The API route groups `http.disable_*` can take away, as LangGraph's server groups them. */
export type RouteGroup = "assistants" | "threads" | "runs" | "store" | "meta" | "ui";

/** `http.cors` of langgraph.json: replaces devmind's default CORS rules. */
export interface CorsSettings {
  allowOrigins?: string[] | undefined;
  allowOriginRegex?: string | undefined;
  allowMethods?: string[] | undefined;
  allowHeaders?: string[] | undefined;
  allowCredentials?: boolean | undefined;
  exposeHeaders?: string[] | undefined;
  maxAge?: number | undefined;
}

/** The `http` section of langgraph.json, checked, as `devmind serve` applies it. */
export interface HttpSettings {
  /** `http.app`: the user's Hono app, mounted before devmind's routes; null without one. */
  app: ModuleReference | null;
  /** Route groups taken away by `http.disable_*` (their paths answer 404 unless the user's app serves them). */
  disabled: RouteGroup[];
  /** `http.cors`, or null for devmind's default rules. */
  cors: CorsSettings | null;
}

const CORS_SCHEMA = z
  .object({
    allow_origins: z.array(z.string()).optional(),
    allow_origin_regex: z.string().optional(),
    allow_methods: z.array(z.string()).optional(),
    allow_headers: z.array(z.string()).optional(),
    allow_credentials: z.boolean().optional(),
    expose_headers: z.array(z.string()).optional(),
    max_age: z.number().int().nonnegative().optional(),
  })
  .strict();

const HEADER_RULES_SCHEMA = z.object({ includes: z.array(z.string()).nullish(), excludes: z.array(z.string()).nullish() }).strict();

/** Every key of `http` that LangGraph's tools know (the JS server's and the Python server's). */
const HTTP_SCHEMA = z
  .object({
    app: z.string().min(1).optional(),
    disable_assistants: z.boolean().optional(),
    disable_threads: z.boolean().optional(),
    disable_runs: z.boolean().optional(),
    disable_store: z.boolean().optional(),
    disable_meta: z.boolean().optional(),
    disable_ui: z.boolean().optional(),
    disable_mcp: z.boolean().optional(),
    disable_a2a: z.boolean().optional(),
    disable_webhooks: z.boolean().optional(),
    cors: CORS_SCHEMA.nullish(),
    configurable_headers: HEADER_RULES_SCHEMA.nullish(),
    logging_headers: HEADER_RULES_SCHEMA.nullish(),
    middleware_order: z.enum(["auth_first", "middleware_first"]).nullish(),
    enable_custom_route_auth: z.boolean().optional(),
    mount_prefix: z.string().optional(),
  })
  .strict();

/** `http.disable_*` keys devmind honours, by the group they take away. */
const DISABLE_KEYS: Record<`disable_${RouteGroup}`, RouteGroup> = {
  disable_assistants: "assistants",
  disable_threads: "threads",
  disable_runs: "runs",
  disable_store: "store",
  disable_meta: "meta",
  disable_ui: "ui",
};

/** What reading the `http` section gives: the settings, what `serve` must refuse, and warnings. */
export interface HttpSection {
  settings: HttpSettings;
  /** Keys `devmind serve` cannot honour, each naming the key and why (serve exits 2 with them). */
  refusals: string[];
  warnings: string[];
}

/**
 * Checks the `http` section of langgraph.json (`path` names the file in messages, `dir` resolves
 * `http.app`). Malformed values are a ConfigError naming the key. Keys devmind honours: `app`,
 * `disable_assistants|threads|runs|store|meta|ui`, `cors`; accepted because devmind already
 * behaves so: `disable_mcp`, `disable_a2a` (it serves neither), `logging_headers` (it logs no
 * header), `enable_custom_route_auth: true` (the user's routes are always behind the API key),
 * `middleware_order: "auth_first"` (LangGraph JS's order: the key is checked before the user's
 * middleware). Refused (returned in `refusals`): `mount_prefix`, `configurable_headers`,
 * `disable_webhooks: true`, `middleware_order: "middleware_first"`. `enable_custom_route_auth:
 * false` is a warning: the key check still applies.
 */
export function readHttpSection(path: string, dir: string, raw: unknown): HttpSection {
  const parsed = HTTP_SCHEMA.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = ["http", ...(issue?.path ?? []).map(String)].join(".");
    const unknown = issue?.code === "unrecognized_keys" ? ` (unknown key${issue.keys.length === 1 ? "" : "s"} ${issue.keys.map((key) => JSON.stringify(key)).join(", ")})` : "";
    throw new ConfigError(`${path}: ${where}: ${issue?.message ?? "invalid"}${unknown}`, { path, key: where });
  }
  const http = parsed.data;
  const refusals: string[] = [];
  const warnings: string[] = [];
  if (http.mount_prefix !== undefined) refusals.push(`${path}: "http.mount_prefix" is not supported by devmind serve (its routes are served at the root)`);
  if (http.configurable_headers != null) refusals.push(`${path}: "http.configurable_headers" is not supported by devmind serve yet (remove it, or read the headers in your http.app middleware)`);
  if (http.disable_webhooks === true) refusals.push(`${path}: "http.disable_webhooks" is not supported by devmind serve (webhooks are controlled by DEVMIND_WEBHOOK_ALLOW)`);
  if (http.middleware_order === "middleware_first") refusals.push(`${path}: "http.middleware_order": "middleware_first" is not supported by devmind serve (the API key is checked before your middleware, as LangGraph JS does: "auth_first")`);
  if (http.enable_custom_route_auth === false) warnings.push(`${path}: "http.enable_custom_route_auth": false ignored: devmind serve puts the routes of http.app behind its API key check as its own`);
  const disabled = (Object.entries(DISABLE_KEYS) as [keyof typeof DISABLE_KEYS, RouteGroup][]).filter(([key]) => http[key] === true).map(([, group]) => group);
  const cors = http.cors == null ? null : corsSettings(path, http.cors);
  return {
    settings: {
      app: http.app === undefined ? null : moduleReference(path, dir, "http.app", http.app),
      disabled,
      cors,
    },
    refusals,
    warnings,
  };
}

function corsSettings(path: string, cors: z.infer<typeof CORS_SCHEMA>): CorsSettings {
  if (cors.allow_origin_regex !== undefined) {
    try {
      new RegExp(cors.allow_origin_regex);
    } catch (error) {
      throw new ConfigError(`${path}: http.cors.allow_origin_regex: not a valid regular expression (${(error as Error).message})`, { path, key: "http.cors.allow_origin_regex" });
    }
  }
  return {
    allowOrigins: cors.allow_origins,
    allowOriginRegex: cors.allow_origin_regex,
    allowMethods: cors.allow_methods,
    allowHeaders: cors.allow_headers,
    allowCredentials: cors.allow_credentials,
    exposeHeaders: cors.expose_headers,
    maxAge: cors.max_age,
  };
}

/**
 * A `"./file.ts:export"` reference of langgraph.json (`key` names it in messages): the file is
 * resolved against the config's directory; the last colon splits file and export, so a Windows
 * drive letter stays in the path; no export means `default`.
 */
export function moduleReference(path: string, dir: string, key: string, source: string): ModuleReference {
  const colon = source.lastIndexOf(":");
  const driveLetterOnly = colon === 1 && /^[A-Za-z]$/.test(source.slice(0, 1));
  const hasExport = colon >= 0 && !driveLetterOnly;
  const fileText = hasExport ? source.slice(0, colon) : source;
  const exportName = hasExport ? source.slice(colon + 1) : "default";
  if (fileText === "" || exportName === "" || !/^[A-Za-z_$][\w$]*$/.test(exportName)) {
    throw new ConfigError(`${path}: ${key}: expected "./path.ts:exportName", got ${JSON.stringify(source.slice(0, 200))}`, { path, key });
  }
  return { source, file: isAbsolute(fileText) ? fileText : resolve(dir, fileText), exportName };
}
