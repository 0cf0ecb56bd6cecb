import { Embeddings } from "@langchain/core/embeddings";
import type { OpenAIEmbeddings } from "@langchain/openai";
import type { DevmindConfig } from "../config.js";
import { MODEL_DEFAULTS } from "../constants.js";
import { ConfigError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { PostgresStoreOptions } from "../store/postgres-store.js";

type OpenAIEmbeddingsOptions = NonNullable<ConstructorParameters<typeof OpenAIEmbeddings>[0]>;

/**
 * LangChain's OpenAIEmbeddings, loaded at its first use: the runtime is created by every CLI
 * command, and LangChain's OpenAI client costs about 0.4 s of CPU to load.
 */
class LazyOpenAIEmbeddings extends Embeddings {
  private client: Promise<Embeddings> | undefined;

  constructor(private readonly options: OpenAIEmbeddingsOptions) {
    super({});
  }

  private load(): Promise<Embeddings> {
    this.client ??= import("@langchain/openai").then(({ OpenAIEmbeddings: Client }) => new Client(this.options));
    return this.client;
  }

  override async embedDocuments(documents: string[]): Promise<number[][]> {
    return (await this.load()).embedDocuments(documents);
  }

  override async embedQuery(document: string): Promise<number[]> {
    return (await this.load()).embedQuery(document);
  }
}

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
  return new LazyOpenAIEmbeddings({
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
