import { defineConfig } from "vitest/config";

/**
 * The opt-in end-to-end tests (`npm run test:chat-ui`): Agent Chat UI, installed from the npm
 * registry into a cache folder, in Debian's chromium against `devmind serve`. Not part of
 * `npm test`: preparing the UI and compiling it take minutes (see test/e2e/agent-chat-ui.ts).
 */
export default defineConfig({
  test: {
    name: "e2e",
    include: ["test/e2e/**/*.e2e.test.ts"],
    // builds dist/ and the migrated PGlite template, as for the integration tests
    globalSetup: ["test/setup/global-setup.ts"],
    testTimeout: 900_000,
    hookTimeout: 1_800_000,
    fileParallelism: false,
    reporters: ["default"],
  },
});
