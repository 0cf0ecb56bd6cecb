import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // the official checkpoint conformance suite calls describe/it/expect as globals
    globals: true,
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // integration files each open their own databases; two cores here
    maxWorkers: 2,
    reporters: ["default"],
  },
});
