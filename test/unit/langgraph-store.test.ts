import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { ConfigError } from "../../src/errors.js";
import { applyGraphEnv, applyProjectEnv, type LanggraphConfig } from "../../src/graphs/langgraph-config.js";
import { storeSection } from "../../src/graphs/langgraph-store.js";

const PATH = "/project/langgraph.json";

function refusal(value: unknown): ConfigError {
  try {
    storeSection(PATH, value);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("langgraph.json store section", () => {
  it("turns LangGraph's store.index and store.ttl into devmind's store settings, read by loadConfig", () => {
    const section = storeSection(PATH, {
      index: { dims: 1536, embed: "openai:text-embedding-3-small", fields: ["text", "memories[*].text"] },
      ttl: { default_ttl: 1440, refresh_on_read: false, sweep_interval_minutes: 30 },
    });
    expect(section.warnings).toEqual([]);
    expect(section.env).toEqual({
      DEVMIND_STORE_INDEX_DIMS: "1536",
      DEVMIND_STORE_INDEX_EMBED: "openai:text-embedding-3-small",
      DEVMIND_STORE_INDEX_FIELDS: "text,memories[*].text",
      DEVMIND_STORE_TTL_MINUTES: "1440",
      DEVMIND_STORE_TTL_REFRESH_ON_READ: "false",
      DEVMIND_STORE_SWEEP_MINUTES: "30",
    });
    const target: NodeJS.ProcessEnv = {};
    applyGraphEnv(section.env, target);
    const config = loadConfig(target, { dotenv: false });
    expect(config.store.index).toEqual({ dims: 1536, embed: { provider: "openai", name: "text-embedding-3-small" }, fields: ["text", "memories[*].text"] });
    expect(config.store.ttl).toEqual({ defaultTtl: 1440, refreshOnRead: false, sweepIntervalMinutes: 30 });
  });

  it("leaves a variable set in the real environment alone", () => {
    const section = storeSection(PATH, { ttl: { default_ttl: 60 } });
    const target: NodeJS.ProcessEnv = { DEVMIND_STORE_TTL_MINUTES: "5" };
    expect(applyGraphEnv(section.env, target)).toEqual([]);
    expect(target.DEVMIND_STORE_TTL_MINUTES).toBe("5");
  });

  it("sets nothing without the key or for an empty section", () => {
    expect(storeSection(PATH, undefined)).toEqual({ env: {}, warnings: [] });
    expect(storeSection(PATH, null)).toEqual({ env: {}, warnings: [] });
    expect(storeSection(PATH, {})).toEqual({ env: {}, warnings: [] });
  });

  it("warns, and turns semantic search off, for embeddings devmind cannot call; keeps the TTL", () => {
    for (const embed of ["./src/embeddings.ts:embeddings", "cohere:embed-english-v3.0"]) {
      const section = storeSection(PATH, { index: { dims: 8, embed }, ttl: { default_ttl: 10 } });
      expect(section.env).toEqual({ DEVMIND_STORE_TTL_MINUTES: "10" });
      expect(section.warnings).toHaveLength(1);
      expect(section.warnings[0]).toContain(`"store.index.embed": ${JSON.stringify(embed)} not honoured`);
      expect(section.warnings[0]).toContain("semantic search is off");
    }
  });

  it("warns about keys of the section no LangGraph tool knows", () => {
    const section = storeSection(PATH, { index: { dims: 3, embed: "openai:m", metric: "l2" }, ttl: { max_ttl: 5 }, shards: 2 });
    expect(section.warnings).toEqual([
      `${PATH}: unknown key "store.shards" ignored`,
      `${PATH}: unknown key "store.index.metric" ignored`,
      `${PATH}: unknown key "store.ttl.max_ttl" ignored`,
    ]);
    expect(section.env).toEqual({ DEVMIND_STORE_INDEX_DIMS: "3", DEVMIND_STORE_INDEX_EMBED: "openai:m" });
  });

  it.each([
    ["a store that is not an object", "yes", "store"],
    ["an index without embed", { index: { dims: 3 } }, "store.index"],
    ["an index without dims", { index: { embed: "openai:m" } }, "store.index"],
    ["dims that are not a positive integer", { index: { dims: 1.5, embed: "openai:m" } }, "store.index.dims"],
    ["fields that are not a list of paths", { index: { dims: 3, embed: "openai:m", fields: "text" } }, "store.index.fields"],
    ["a TTL that is not a positive number", { ttl: { default_ttl: -1 } }, "store.ttl.default_ttl"],
    ["refresh_on_read that is not a boolean", { ttl: { refresh_on_read: "yes" } }, "store.ttl.refresh_on_read"],
  ])("refuses %s, naming the file and the key", (_name, value, key) => {
    const error = refusal(value);
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.details.key).toBe(key);
    expect(error.message).toContain(`${PATH}: ${key}`);
  });

  describe("applied with the project's env", () => {
    // no .env is read from a directory that does not exist
    const NO_DOTENV = "/nonexistent-devmind-test-dir";
    const project = (value: unknown): LanggraphConfig => ({ path: PATH, env: storeSection(PATH, value).env }) as LanggraphConfig;
    const index = { index: { dims: 3, embed: "openai:text-embedding-3-small" }, ttl: { default_ttl: 5 } };

    it("keeps the index where it can embed (a key or a base URL, from the environment or the project's env)", () => {
      for (const endpoint of [{ OPENAI_API_KEY: "k" }, { LLM_BASE_URL: "http://127.0.0.1:11434/v1" }]) {
        const target: NodeJS.ProcessEnv = { ...endpoint };
        expect(applyProjectEnv(project(index), target, NO_DOTENV)).toEqual([]);
        expect(target.DEVMIND_STORE_INDEX_EMBED).toBe("openai:text-embedding-3-small");
      }
      const withKey = { ...project(index), env: { ...project(index).env, OPENAI_API_KEY: "from-langgraph-json" } } as LanggraphConfig;
      const target: NodeJS.ProcessEnv = {};
      expect(applyProjectEnv(withKey, target, NO_DOTENV)).toEqual([]);
      expect(target.DEVMIND_STORE_INDEX_DIMS).toBe("3");
    });

    it("without an endpoint: the index is taken back with a warning (semantic search off), the TTL stays; the user's own index variables are left", () => {
      const target: NodeJS.ProcessEnv = {};
      const warnings = applyProjectEnv(project(index), target, NO_DOTENV);
      expect(warnings).toEqual([`${PATH}: "store.index" not honoured: embedding with openai:text-embedding-3-small needs OPENAI_API_KEY, or OPENAI_BASE_URL for a local server; semantic search is off`]);
      expect(target).toEqual({ DEVMIND_STORE_TTL_MINUTES: "5" });
      expect(loadConfig(target, { dotenv: false }).store.index).toBeNull();
      const own: NodeJS.ProcessEnv = { DEVMIND_STORE_INDEX_DIMS: "8", DEVMIND_STORE_INDEX_EMBED: "openai:mine" };
      expect(applyProjectEnv(project(index), own, NO_DOTENV)).toEqual([]);
      expect(own).toMatchObject({ DEVMIND_STORE_INDEX_DIMS: "8", DEVMIND_STORE_INDEX_EMBED: "openai:mine" });
    });
  });
});
