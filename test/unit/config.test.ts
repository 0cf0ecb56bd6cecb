import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { describeModelRequirement, loadConfig, parseDotenv, redactConfig, type DevmindConfig } from "../../src/config.js";
import { CONFIG_DEFAULTS } from "../../src/constants.js";
import { ConfigError } from "../../src/errors.js";

/** Runs loadConfig expecting a ConfigError and returns it. */
function configError(env: Record<string, string | undefined>, options?: Parameters<typeof loadConfig>[1]): ConfigError {
  try {
    loadConfig(env, options);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected loadConfig to throw a ConfigError");
}

/** The single problem line reported for one bad variable. */
function problem(env: Record<string, string>): string {
  const error = configError(env);
  expect(error.details.variables).toEqual(Object.keys(env));
  const lines = error.details.problems as string[];
  expect(lines).toHaveLength(1);
  expect(error.message).toContain(lines[0]);
  return lines[0] as string;
}

describe("loadConfig defaults", () => {
  it("uses every default from constants.ts with an empty env", () => {
    const config = loadConfig({});
    const expected: DevmindConfig = {
      databaseUrl: undefined,
      dataDir: ".devmind",
      dbSchema: "devmind",
      model: null,
      openai: { apiKey: undefined, baseUrl: undefined, model: "gpt-4o-mini" },
      modelTimeoutMs: 60_000,
      modelMaxRetries: 2,
      limits: {
        maxModelRounds: 8,
        maxToolCalls: 16,
        maxTokens: 200_000,
        runTimeoutMs: 900_000,
        toolTimeoutMs: 10_000,
        maxToolOutputChars: 12_000,
        noProgressLimit: 3,
        contextTokens: 64_000,
      },
      requireApproval: [],
      autoApprove: [],
      workspace: "./workspace",
      worker: { concurrency: 4, leaseMs: 30_000, maxAttempts: 3 },
      server: { host: "127.0.0.1", port: 8787, apiKeys: [], allowTruncate: false, authTimeoutMs: 10_000 },
      image: null,
      webhooks: { allow: ["localhost", "127.0.0.0/8", "::1"], maxAttempts: 5, retryBaseMs: 1_000, timeoutMs: 10_000 },
      store: { index: null, ttl: { refreshOnRead: true, sweepIntervalMinutes: 60 } },
      graphDefaults: {},
      logLevel: "info",
      operations: { metrics: { enabled: true, public: false }, tracing: null, langsmith: null },
    };
    expect(config).toEqual(expected);
    expect(config.server.port).toBe(CONFIG_DEFAULTS.port);
  });

  it("reads the operations variables: metrics switches, OTLP endpoint (/v1/traces added), LangSmith by its LangChain aliases too", () => {
    const config = loadConfig({ DEVMIND_METRICS: "false", DEVMIND_METRICS_KEY: "scrape-1", OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318/", LANGCHAIN_TRACING_V2: "true", LANGCHAIN_ENDPOINT: "http://127.0.0.1:9/", LANGCHAIN_API_KEY: "ls-key" });
    expect(config.operations).toEqual({
      metrics: { enabled: false, key: "scrape-1", public: false },
      tracing: { exporter: "otlp", url: "http://127.0.0.1:4318/v1/traces", serviceName: "devmind" },
      langsmith: { endpoint: "http://127.0.0.1:9/", apiKey: "ls-key", project: "default" },
    });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_TRACES_EXPORTER: "none" }).operations?.tracing).toBeNull();
    expect(() => loadConfig({ OTEL_TRACES_EXPORTER: "zipkin" })).toThrow(/OTEL_TRACES_EXPORTER: expected otlp, console or none/);
    expect(() => loadConfig({ LANGSMITH_API_KEY: "has space" })).toThrow(/LANGSMITH_API_KEY: .*\(hidden\)/);
  });

  it("reads LANGGRAPH_CONFIG as LangGraph's server does: per graph, context apart from the rest (the assistant's config)", () => {
    const config = loadConfig({ LANGGRAPH_CONFIG: '{"agent": {"configurable": {"model_name": "openai"}}, "simple": {"context": {"model": "unknown"}, "tags": ["a"]}}' });
    expect(config.graphDefaults).toEqual({ agent: { config: { configurable: { model_name: "openai" } } }, simple: { config: { tags: ["a"] }, context: { model: "unknown" } } });
    expect(() => loadConfig({ LANGGRAPH_CONFIG: "{not json" })).toThrow(/LANGGRAPH_CONFIG.*expected JSON/);
    expect(() => loadConfig({ LANGGRAPH_CONFIG: '{"agent": 3}' })).toThrow(/LANGGRAPH_CONFIG.*graph "agent": expected an object/);
  });

  it("treats empty and blank strings as unset", () => {
    const config = loadConfig({ DEVMIND_PORT: "", LOG_LEVEL: "  ", DATABASE_URL: "", OPENAI_API_KEY: "" });
    expect(config.server.port).toBe(8787);
    expect(config.logLevel).toBe("info");
    expect(config.databaseUrl).toBeUndefined();
    expect(config.model).toBeNull();
  });

  it("parses every kind of valid value", () => {
    const config = loadConfig({
      DATABASE_URL: "postgresql://app:pw@db.internal:5432/app",
      DEVMIND_DATA_DIR: "memory://",
      DEVMIND_DB_SCHEMA: "tenant_1",
      DEVMIND_MODEL_MAX_RETRIES: "0",
      DEVMIND_WORKER_CONCURRENCY: "0",
      DEVMIND_MAX_TOKENS: "5000",
      DEVMIND_REQUIRE_APPROVAL: " write_file, ,run-cmd,write_file ",
      DEVMIND_AUTO_APPROVE: "read_file",
      DEVMIND_HOST: "0.0.0.0",
      DEVMIND_PORT: "65535",
      DEVMIND_API_KEYS: "ci=abc==, alice = s3cret",
      DEVMIND_ALLOW_TRUNCATE: "true",
      LOG_LEVEL: "DEBUG",
    });
    expect(config.databaseUrl).toBe("postgresql://app:pw@db.internal:5432/app");
    expect(config.dataDir).toBe("memory://");
    expect(config.dbSchema).toBe("tenant_1");
    expect(config.modelMaxRetries).toBe(0);
    expect(config.worker.concurrency).toBe(0);
    expect(config.limits.maxTokens).toBe(5000);
    expect(config.requireApproval).toEqual(["write_file", "run-cmd"]);
    expect(config.autoApprove).toEqual(["read_file"]);
    expect(config.server).toEqual({
      host: "0.0.0.0",
      port: 65535,
      apiKeys: [
        { name: "ci", key: "abc==" },
        { name: "alice", key: "s3cret" },
      ],
      allowTruncate: true,
      authTimeoutMs: 10_000,
    });
    expect(config.logLevel).toBe("debug");
  });

  it("accepts loopback hosts without API keys", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"]) {
      expect(loadConfig({ DEVMIND_HOST: host }).server.host).toBe(host);
    }
  });
});

describe("loadConfig rejects bad values", () => {
  it("DATABASE_URL with a non-postgres scheme", () => {
    expect(problem({ DATABASE_URL: "mysql://db.internal/app" })).toBe(
      'DATABASE_URL: expected a postgres:// or postgresql:// URL, got "mysql://db.internal/app"',
    );
  });

  it("DATABASE_URL that is not a URL", () => {
    expect(problem({ DATABASE_URL: "not a url" })).toBe('DATABASE_URL: expected a postgres:// or postgresql:// URL, got "not a url"');
  });

  it("DATABASE_URL without a host", () => {
    expect(problem({ DATABASE_URL: "postgresql:///devmind" })).toBe(
      'DATABASE_URL: expected a postgres:// or postgresql:// URL with a host, got "postgresql:///devmind"',
    );
  });

  it("bad schema name", () => {
    expect(problem({ DEVMIND_DB_SCHEMA: "Bad-Schema" })).toBe(
      'DEVMIND_DB_SCHEMA: expected a schema name matching ^[a-z_][a-z0-9_]{0,62}$, got "Bad-Schema"',
    );
  });

  it("non-integer, fractional and negative integers", () => {
    expect(problem({ DEVMIND_MAX_TOOL_CALLS: "abc" })).toBe('DEVMIND_MAX_TOOL_CALLS: expected an integer from 1 to 10000, got "abc"');
    expect(problem({ DEVMIND_LEASE_MS: "1.5" })).toBe('DEVMIND_LEASE_MS: expected an integer from 1 to 3600000, got "1.5"');
    expect(problem({ DEVMIND_MAX_TOKENS: "-5" })).toBe('DEVMIND_MAX_TOKENS: expected an integer from 1 to 100000000, got "-5"');
    expect(problem({ DEVMIND_MODEL_MAX_RETRIES: "-1" })).toBe('DEVMIND_MODEL_MAX_RETRIES: expected an integer from 0 to 20, got "-1"');
  });

  it("zero where zero makes no sense", () => {
    expect(problem({ DEVMIND_MAX_MODEL_ROUNDS: "0" })).toBe('DEVMIND_MAX_MODEL_ROUNDS: expected an integer from 1 to 1000, got "0"');
    expect(problem({ DEVMIND_MAX_ATTEMPTS: "0" })).toBe('DEVMIND_MAX_ATTEMPTS: expected an integer from 1 to 1000, got "0"');
    expect(problem({ DEVMIND_AUTH_TIMEOUT_MS: "0" })).toBe('DEVMIND_AUTH_TIMEOUT_MS: expected an integer from 1 to 600000, got "0"');
    expect(loadConfig({ DEVMIND_AUTH_TIMEOUT_MS: "1500" }).server.authTimeoutMs).toBe(1_500);
  });

  it("out of range port", () => {
    expect(problem({ DEVMIND_PORT: "0" })).toBe('DEVMIND_PORT: expected an integer from 1 to 65535, got "0"');
    expect(problem({ DEVMIND_PORT: "65536" })).toBe('DEVMIND_PORT: expected an integer from 1 to 65535, got "65536"');
  });

  it("bad DEVMIND_MODEL prefix and empty parts", () => {
    expect(problem({ DEVMIND_MODEL: "anthropic:claude" })).toBe(
      'DEVMIND_MODEL: expected "openai:NAME", "scripted:PATH" or a bare model name, got "anthropic:claude"',
    );
    expect(problem({ DEVMIND_MODEL: "scripted:" })).toBe('DEVMIND_MODEL: expected a file path after "scripted:", got "scripted:"');
    expect(problem({ DEVMIND_MODEL: "openai: " })).toBe('DEVMIND_MODEL: expected a model name after "openai:", got "openai:"');
  });

  it("bad tool names in approval lists", () => {
    expect(problem({ DEVMIND_REQUIRE_APPROVAL: "write_file,rm -rf" })).toBe(
      'DEVMIND_REQUIRE_APPROVAL: expected comma-separated tool names matching ^[A-Za-z0-9_-]{1,64}$, got "write_file,rm -rf"',
    );
    expect(problem({ DEVMIND_AUTO_APPROVE: "x".repeat(65) })).toContain("DEVMIND_AUTO_APPROVE: expected comma-separated tool names");
  });

  it("malformed DEVMIND_API_KEYS", () => {
    expect(problem({ DEVMIND_API_KEYS: "ci=abc,justakey" })).toBe(
      'DEVMIND_API_KEYS: expected comma-separated name=key pairs (entry 2 has no "="), got (hidden)',
    );
    expect(problem({ DEVMIND_API_KEYS: "ci=" })).toBe(
      'DEVMIND_API_KEYS: expected comma-separated name=key pairs (entry 1: key "ci" is empty or has spaces), got (hidden)',
    );
    expect(problem({ DEVMIND_API_KEYS: "=abc" })).toBe(
      "DEVMIND_API_KEYS: expected comma-separated name=key pairs (entry 1: name must match ^[A-Za-z0-9_.-]{1,64}$), got (hidden)",
    );
  });

  it("duplicate DEVMIND_API_KEYS names", () => {
    expect(problem({ DEVMIND_API_KEYS: "ci=one,ci=two" })).toBe(
      'DEVMIND_API_KEYS: expected comma-separated name=key pairs with unique names ("ci" repeats), got (hidden)',
    );
  });

  it("non-loopback host without API keys", () => {
    expect(problem({ DEVMIND_HOST: "0.0.0.0" })).toBe(
      'DEVMIND_HOST: expected a loopback host (127.0.0.1, ::1, localhost) unless DEVMIND_API_KEYS is set, got "0.0.0.0"',
    );
    expect(loadConfig({ DEVMIND_HOST: "0.0.0.0", DEVMIND_API_KEYS: "ci=k" }).server.host).toBe("0.0.0.0");
  });

  it("DEVMIND_ALLOW_TRUNCATE that is not a boolean", () => {
    expect(problem({ DEVMIND_ALLOW_TRUNCATE: "always" })).toBe('DEVMIND_ALLOW_TRUNCATE: expected true or false, got "always"');
  });

  it("bad LOG_LEVEL", () => {
    expect(problem({ LOG_LEVEL: "verbose" })).toBe('LOG_LEVEL: expected one of debug, info, warn, error, got "verbose"');
  });

  it("bad base URLs", () => {
    expect(problem({ OPENAI_BASE_URL: "ftp://models.local/v1" })).toBe(
      'OPENAI_BASE_URL: expected a http:// or https:// URL, got "ftp://models.local/v1"',
    );
    expect(problem({ DEVMIND_IMAGE_BASE_URL: "localhost:8080" })).toBe(
      'DEVMIND_IMAGE_BASE_URL: expected a http:// or https:// URL, got "localhost:8080"',
    );
    expect(problem({ LLM_BASE_URL: "nope" })).toBe('LLM_BASE_URL: expected a http:// or https:// URL, got "nope"');
  });

  it("reports several bad variables together in one error", () => {
    const error = configError({ DEVMIND_PORT: "abc", LOG_LEVEL: "loud", DEVMIND_DB_SCHEMA: "1x", DEVMIND_HOST: "10.0.0.5" });
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.kind).toBe("user");
    expect(error.details.variables).toEqual(["DEVMIND_DB_SCHEMA", "DEVMIND_PORT", "LOG_LEVEL", "DEVMIND_HOST"]);
    expect(error.message.split("\n")).toEqual([
      "Invalid configuration (4 variables):",
      'DEVMIND_DB_SCHEMA: expected a schema name matching ^[a-z_][a-z0-9_]{0,62}$, got "1x"',
      'DEVMIND_PORT: expected an integer from 1 to 65535, got "abc"',
      'LOG_LEVEL: expected one of debug, info, warn, error, got "loud"',
      'DEVMIND_HOST: expected a loopback host (127.0.0.1, ::1, localhost) unless DEVMIND_API_KEYS is set, got "10.0.0.5"',
    ]);
  });

  it("never echoes secrets", () => {
    const error = configError({
      OPENAI_API_KEY: "sk-topsecret with space",
      DEVMIND_IMAGE_API_KEY: "img-topsecret\tx",
      DEVMIND_API_KEYS: "ci=topsecret-key,ci=other-topsecret",
      DATABASE_URL: "mysql://app:topsecret-pw@db/app",
      DEVMIND_PORT: "x",
    });
    expect(error.details.variables).toEqual(["DATABASE_URL", "OPENAI_API_KEY", "DEVMIND_PORT", "DEVMIND_API_KEYS", "DEVMIND_IMAGE_API_KEY"]);
    expect(error.message).not.toContain("topsecret");
    expect(JSON.stringify(error.toJSON())).not.toContain("topsecret");
    expect(error.message).toContain('DATABASE_URL: expected a postgres:// or postgresql:// URL, got "mysql://app:***@db/app"');
    expect(error.message).toContain("OPENAI_API_KEY: expected printable ASCII characters without spaces, got (hidden)");
    expect(error.message).toContain("DEVMIND_IMAGE_API_KEY: expected printable ASCII characters without spaces, got (hidden)");
    const aliasError = configError({ LLM_API_KEY: "llm topsecret" });
    expect(aliasError.message).toContain("LLM_API_KEY: expected printable ASCII characters without spaces, got (hidden)");
    expect(aliasError.message).not.toContain("topsecret");
  });

  it("hides an unparseable DATABASE_URL that may hold a password", () => {
    const line = problem({ DATABASE_URL: "app:topsecret@db/app" });
    expect(line).toBe("DATABASE_URL: expected a postgres:// or postgresql:// URL, got (hidden)");
  });
});

describe("aliases and model selection", () => {
  it("uses LLM_* when OPENAI_* is unset", () => {
    const config = loadConfig({ LLM_API_KEY: "llm-key", LLM_BASE_URL: "http://localhost:11434/v1", LLM_MODEL: "llama3" });
    expect(config.openai).toEqual({ apiKey: "llm-key", baseUrl: "http://localhost:11434/v1", model: "llama3" });
    expect(config.model).toEqual({ provider: "openai", name: "llama3" });
  });

  it("lets OPENAI_* win over differing LLM_* values", () => {
    const config = loadConfig({
      OPENAI_API_KEY: "openai-key",
      LLM_API_KEY: "llm-key",
      OPENAI_BASE_URL: "https://api.openai.com/v1",
      LLM_BASE_URL: "not even a url",
      OPENAI_MODEL: "gpt-4o",
      LLM_MODEL: "llama3",
    });
    expect(config.openai).toEqual({ apiKey: "openai-key", baseUrl: "https://api.openai.com/v1", model: "gpt-4o" });
  });

  it("DEVMIND_MODEL wins when set (openai prefix, bare name, scripted path)", () => {
    expect(loadConfig({ DEVMIND_MODEL: "openai:gpt-4.1", OPENAI_MODEL: "gpt-4o" }).model).toEqual({ provider: "openai", name: "gpt-4.1" });
    expect(loadConfig({ DEVMIND_MODEL: "gpt-4.1-mini" }).model).toEqual({ provider: "openai", name: "gpt-4.1-mini" });
    expect(loadConfig({ DEVMIND_MODEL: "scripted:./fixtures/run.json", OPENAI_API_KEY: "k" }).model).toEqual({
      provider: "scripted",
      path: "./fixtures/run.json",
    });
  });

  it("falls back to openai:$OPENAI_MODEL when a key or base URL is set", () => {
    expect(loadConfig({ OPENAI_API_KEY: "k" }).model).toEqual({ provider: "openai", name: "gpt-4o-mini" });
    expect(loadConfig({ OPENAI_BASE_URL: "http://127.0.0.1:8000/v1", OPENAI_MODEL: "qwen" }).model).toEqual({ provider: "openai", name: "qwen" });
  });

  it("has no model when nothing is set, even with OPENAI_MODEL alone", () => {
    expect(loadConfig({ OPENAI_MODEL: "gpt-4o" }).model).toBeNull();
    const message = describeModelRequirement();
    expect(message).toContain("DEVMIND_MODEL");
    expect(message).toContain("OPENAI_API_KEY");
    expect(message).toContain("OPENAI_BASE_URL");
  });

  it("enables image config only with DEVMIND_IMAGE_MODEL, falling back to OpenAI settings", () => {
    expect(loadConfig({ OPENAI_API_KEY: "k", DEVMIND_IMAGE_BASE_URL: "https://img.example/v1" }).image).toBeNull();
    expect(loadConfig({ OPENAI_API_KEY: "k", OPENAI_BASE_URL: "https://api.example/v1", DEVMIND_IMAGE_MODEL: "gpt-image-1" }).image).toEqual({
      model: "gpt-image-1",
      baseUrl: "https://api.example/v1",
      apiKey: "k",
    });
    expect(
      loadConfig({ OPENAI_API_KEY: "k", DEVMIND_IMAGE_MODEL: "sdxl", DEVMIND_IMAGE_BASE_URL: "http://img:9000", DEVMIND_IMAGE_API_KEY: "ik" }).image,
    ).toEqual({ model: "sdxl", baseUrl: "http://img:9000", apiKey: "ik" });
  });
});

describe(".env loading", () => {
  const dirs: string[] = [];
  afterEach(() => {
    vi.unstubAllEnvs();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  function dirWithDotenv(text: string): string {
    const dir = mkdtempSync(join(tmpdir(), "devmind-config-"));
    dirs.push(dir);
    writeFileSync(join(dir, ".env"), text);
    return dir;
  }

  it("loads .env when asked, and real variables win", () => {
    const cwd = dirWithDotenv("DEVMIND_PORT=9001\nLOG_LEVEL=warn\nDEVMIND_DB_SCHEMA=from_file\n");
    const config = loadConfig({ DEVMIND_PORT: "9002", DEVMIND_DB_SCHEMA: "" }, { cwd, dotenv: true });
    expect(config.server.port).toBe(9002);
    expect(config.logLevel).toBe("warn");
    expect(config.dbSchema).toBe("from_file");
  });

  it("reads process.env plus .env in options.cwd when env is omitted", () => {
    const cwd = dirWithDotenv("DEVMIND_CONTEXT_TOKENS=1234\nDEVMIND_NO_PROGRESS_LIMIT=5\n");
    vi.stubEnv("DEVMIND_CONTEXT_TOKENS", "");
    vi.stubEnv("DEVMIND_NO_PROGRESS_LIMIT", "7");
    const config = loadConfig(undefined, { cwd });
    expect(config.limits.contextTokens).toBe(1234);
    expect(config.limits.noProgressLimit).toBe(7);
    expect(loadConfig(undefined, { cwd, dotenv: false }).limits.contextTokens).toBe(64_000);
  });

  it("ignores .env when env is passed without dotenv: true", () => {
    const cwd = dirWithDotenv("DEVMIND_PORT=9001\n");
    expect(loadConfig({}, { cwd }).server.port).toBe(8787);
  });

  it("is fine without a .env file", () => {
    const cwd = mkdtempSync(join(tmpdir(), "devmind-config-"));
    dirs.push(cwd);
    expect(loadConfig({}, { cwd, dotenv: true }).server.port).toBe(8787);
  });

  it("names the file and line of a malformed line", () => {
    const cwd = dirWithDotenv("# settings\nDEVMIND_PORT=9001\n\nthis is not an assignment\n");
    const error = configError({}, { cwd, dotenv: true });
    const file = join(cwd, ".env");
    expect(error.message).toBe(`${file}:4: expected KEY=value, "export KEY=value", a # comment or a blank line`);
    expect(error.details).toEqual({ file, line: 4 });
  });

  it("validates values that come from .env", () => {
    const cwd = dirWithDotenv("DEVMIND_PORT=http\n");
    expect(configError({}, { cwd, dotenv: true }).message).toContain('DEVMIND_PORT: expected an integer from 1 to 65535, got "http"');
  });
});

describe("parseDotenv", () => {
  it("handles export, comments, blanks and quoting", () => {
    const text = [
      "# a comment",
      "",
      "PLAIN=value",
      "export EXPORTED=yes",
      "SPACED = padded value   ",
      "INLINE=abc # trailing comment",
      "HASH=#ffffff",
      "EMPTY=",
      "EMPTY_COMMENT= # nothing here",
      "SINGLE='it has # and \\n literally'",
      'DOUBLE="line1\\nline2 \\"quoted\\" C:\\\\dir \\d" # comment',
      "   INDENTED=1",
      "CRLF=yes\r",
      "PLAIN=second wins",
    ].join("\n");
    expect(parseDotenv(text)).toEqual({
      PLAIN: "second wins",
      EXPORTED: "yes",
      SPACED: "padded value",
      INLINE: "abc",
      HASH: "#ffffff",
      EMPTY: "",
      EMPTY_COMMENT: "",
      SINGLE: "it has # and \\n literally",
      DOUBLE: 'line1\nline2 "quoted" C:\\dir \\d',
      INDENTED: "1",
      CRLF: "yes",
    });
  });

  it("rejects broken lines with the file name and line number, without echoing them", () => {
    expect(() => parseDotenv("A=1\nB='unterminated", "conf.env")).toThrow(
      "conf.env:2: the value of B has an unterminated quote or text after the closing quote",
    );
    expect(() => parseDotenv('A="x" trailing')).toThrow(".env:1: the value of A has an unterminated quote");
    expect(() => parseDotenv("A=1\n\n1BAD=secretvalue")).toThrow(/^\.env:3: expected KEY=value/);
    const error = (() => {
      try {
        parseDotenv("SECRET secretvalue");
      } catch (caught) {
        return caught as ConfigError;
      }
      throw new Error("expected parseDotenv to throw");
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe('.env:1: expected KEY=value, "export KEY=value", a # comment or a blank line');
  });
});

describe("redactConfig", () => {
  it("hides keys and the database password without touching the original", () => {
    const config = loadConfig({
      DATABASE_URL: "postgres://app:hunter2@db:5432/app",
      OPENAI_API_KEY: "sk-live",
      DEVMIND_IMAGE_MODEL: "gpt-image-1",
      DEVMIND_API_KEYS: "ci=k1,ops=k2",
    });
    const redacted = redactConfig(config);
    expect(redacted.databaseUrl).toBe("postgres://app:***@db:5432/app");
    expect(redacted.openai.apiKey).toBe("***");
    expect(redacted.image).toEqual({ model: "gpt-image-1", baseUrl: undefined, apiKey: "***" });
    expect(redacted.server.apiKeys).toEqual([
      { name: "ci", key: "***" },
      { name: "ops", key: "***" },
    ]);
    const json = JSON.stringify(redacted);
    for (const secret of ["hunter2", "sk-live", "k1", "k2"]) expect(json).not.toContain(secret);
    expect(config.openai.apiKey).toBe("sk-live");
    expect(config.databaseUrl).toBe("postgres://app:hunter2@db:5432/app");
  });

  it("leaves a URL without a password and absent keys unchanged", () => {
    const redacted = redactConfig(loadConfig({ DATABASE_URL: "postgres://db/app" }));
    expect(redacted.databaseUrl).toBe("postgres://db/app");
    expect(redacted.openai.apiKey).toBeUndefined();
    expect(redacted.image).toBeNull();
  });
});

describe("webhook and memory-store variables", () => {
  it("reads the allow-list, retries, the store's index and TTL", () => {
    const config = loadConfig({
      DEVMIND_WEBHOOK_ALLOW: "hooks.example.com, 10.1.0.0/16",
      DEVMIND_WEBHOOK_MAX_ATTEMPTS: "7",
      DEVMIND_WEBHOOK_RETRY_MS: "250",
      DEVMIND_WEBHOOK_TIMEOUT_MS: "3000",
      DEVMIND_STORE_INDEX_DIMS: "1536",
      DEVMIND_STORE_INDEX_EMBED: "openai:text-embedding-3-small",
      DEVMIND_STORE_INDEX_FIELDS: "text,memories[*].text",
      DEVMIND_STORE_TTL_MINUTES: "1440",
      DEVMIND_STORE_TTL_REFRESH_ON_READ: "false",
      DEVMIND_STORE_SWEEP_MINUTES: "5",
    });
    expect(config.webhooks).toEqual({ allow: ["hooks.example.com", "10.1.0.0/16"], maxAttempts: 7, retryBaseMs: 250, timeoutMs: 3000 });
    expect(config.store).toEqual({
      index: { dims: 1536, embed: { provider: "openai", name: "text-embedding-3-small" }, fields: ["text", "memories[*].text"] },
      ttl: { defaultTtl: 1440, refreshOnRead: false, sweepIntervalMinutes: 5 },
    });
  });

  it("refuses a malformed allow-list entry and an index without its model or dimensions", () => {
    expect(problem({ DEVMIND_WEBHOOK_ALLOW: "localhost,10.0.0.0/99" })).toMatch(/^DEVMIND_WEBHOOK_ALLOW: expected .*prefix/);
    expect(problem({ DEVMIND_STORE_TTL_MINUTES: "-1" })).toMatch(/^DEVMIND_STORE_TTL_MINUTES: expected a positive number/);
    expect(configError({ DEVMIND_STORE_INDEX_DIMS: "64" }).details.variables).toEqual(["DEVMIND_STORE_INDEX_EMBED"]);
    expect(configError({ DEVMIND_STORE_INDEX_EMBED: "text-embedding-3-small" }).details.variables).toEqual(["DEVMIND_STORE_INDEX_DIMS"]);
  });
});
