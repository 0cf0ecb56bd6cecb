/**
 * Every bound and fixed name of `npm run conformance` in one place, so a slower machine changes
 * numbers here, not in the steps.
 */
export const CONFORMANCE = {
  /** Where the official server's tests live inside the langgraphjs repository. */
  testsPath: "libs/langgraph-api/tests",
  /**
   * The official package's sources: auth.test.mts imports `../src/auth/index.mjs` and
   * stream-sdk.test.mts `../../src/experimental/embed.mjs` (their `src/` sits beside `tests/`).
   */
  srcPath: "libs/langgraph-api/src",
  /** The official package's vitest config (testTimeout 30 s, files one at a time); extracted beside the tests. */
  vitestConfigPath: "libs/langgraph-api/vitest.config.js",
  /**
   * The official package's tsconfig.json, extracted beside the tests as it sits in the repository:
   * LangGraph's schema extractor compiles the test graphs with the nearest tsconfig (without it,
   * TypeScript's defaults target ES5, `AsyncIterableIterator` is missing, and `BaseMessage` comes out
   * untyped where the tests expect `$ref: BaseMessage<…>`).
   */
  tsconfigPath: "libs/langgraph-api/tsconfig.json",
  /** The official package's package.json (its version and the test-only packages' ranges). */
  officialPackagePath: "libs/langgraph-api/package.json",
  /** Its copy in the temp dir. */
  officialPackageCopy: "official-api-package.json",
  /** Path components of `libs/langgraph-api/` stripped on extraction: the temp dir gets `tests/`, `src/` and `vitest.config.js`. */
  stripComponents: 2,
  /** `npm install` in the temp dir (cold cache: a few hundred packages). */
  installTimeoutMs: 10 * 60_000,
  /** `npm run build` of devmind when dist is stale. */
  buildTimeoutMs: 8 * 60_000,
  /** `npm pack` of devmind. */
  packTimeoutMs: 3 * 60_000,
  /** Until `GET /ok` answers (200, or an auth handler's 401/403; devmind loads 11 graphs with tsx; the official server compiles schemas). */
  serverStartTimeoutMs: 3 * 60_000,
  /** Between two `GET /ok` polls. */
  serverPollMs: 500,
  /** SIGTERM to the server's process group, then SIGKILL after this long. */
  stopGraceMs: 10_000,
  /** The whole vitest run of one file. */
  vitestTimeoutMs: 15 * 60_000,
  /** Lines of each failing test's error printed in the summary. */
  errorLines: 3,
  /** Lines of the server log printed when it fails to start. */
  logTailLines: 40,
  /** Prefix of the `--pg` schema; a random suffix follows. */
  schemaPrefix: "conf_",
  /** The official server's package versions (the mirror's libs/langgraph-api is 1.4.5). */
  officialApiVersion: "1.4.5",
  /** The official server loads TypeScript for its schema extraction (peer dependency ^5.5.4). */
  officialTypescriptVersion: "5.9.3",
} as const;
