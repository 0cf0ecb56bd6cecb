import type { Embeddings } from "@langchain/core/embeddings";
import { OpenAIEmbeddings } from "@langchain/openai";
import type { DevmindConfig } from "../config.js";
import { MODEL_DEFAULTS } from "../constants.js";
import { ConfigError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { PostgresStoreOptions } from "../store/postgres-store.js";

/**
 * The embeddings the configuration names for the store's index (DEVMIND_STORE_INDEX_EMBED): an
 * OpenAI-compatible embeddings model on OPENAI_BASE_URL / OPENAI_API_KEY, asked for `dims`
 * dimensions. CONFIG_INVALID without a key or base URL.
 */
export function embeddingsFromConfig(config: DevmindConfig): Embeddings {
  const index = config.store.index;
  if (index === null) throw new ConfigError("DEVMIND_STORE_INDEX_DIMS and DEVMIND_STORE_INDEX_EMBED are not set", { variables: ["DEVMIND_STORE_INDEX_DIMS", "DEVMIND_STORE_INDEX_EMBED"] });
  const { apiKey, baseUrl } = config.openai;
  if (apiKey === undefined && baseUrl === undefined) {
    throw new ConfigError(`DEVMIND_STORE_INDEX_EMBED=openai:${index.embed.name} needs OPENAI_API_KEY, or OPENAI_BASE_URL for a local server that needs no key`, {
      variables: ["OPENAI_API_KEY", "OPENAI_BASE_URL"],
    });
  }
  return new OpenAIEmbeddings({
    model: index.embed.name,
    dimensions: index.dims,
    apiKey: apiKey ?? MODEL_DEFAULTS.placeholderApiKey,
    configuration: { baseURL: baseUrl ?? MODEL_DEFAULTS.openaiBaseUrl },
    timeout: config.modelTimeoutMs,
  });
}

/**
 * `runtime.store`'s options from the configuration: the semantic index (DEVMIND_STORE_INDEX_*,
 * with `embeddings` when given, else `embeddingsFromConfig`) and the TTL settings
 * (DEVMIND_STORE_TTL_MINUTES, DEVMIND_STORE_TTL_REFRESH_ON_READ, DEVMIND_STORE_SWEEP_MINUTES;
 * the sweep runs once `store.start()` is called, as `serve` and `worker` do).
 */
export function storeOptionsFromConfig(config: DevmindConfig, embeddings: Embeddings | undefined, logger: Logger): PostgresStoreOptions {
  const index = config.store.index;
  return {
    ...(index === null ? {} : { index: { dims: index.dims, fields: index.fields, embeddings: embeddings ?? embeddingsFromConfig(config) } }),
    ttl: config.store.ttl,
    logger,
  };
}
