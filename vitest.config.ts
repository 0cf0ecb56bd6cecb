import { defineConfig } from "vitest/config";
import SlowFirstSequencer from "./test/setup/slow-first-sequencer.js";

export default defineConfig({
  test: {
    // the official checkpoint conformance suite calls describe/it/expect as globals
    globals: true,
    // bounds, not expectations: a loaded 2-core machine (other suites running) makes a fresh PGlite
    // directory or a child's start take tens of seconds; a test still fails on what it asserts
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // integration files each open their own databases; two cores here, but most files wait on
    // child processes and the database, so three at once finish sooner than two (a clean `.ci/run`
    // of 2026-12-02: cores 95% busy and 602 s with three workers, 85% and 638 s with two)
    maxWorkers: 3,
    reporters: ["default"],
    // CPU seconds per file when DEVMIND_TEST_CPU_LOG names a file (printed by .ci/run)
    setupFiles: ["test/setup/cpu-probe.ts"],
    sequence: { sequencer: SlowFirstSequencer },
    projects: [
      // unit tests do no I/O and keep no state between files: one module graph per worker instead
      // of one per file (a third of the CPU)
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"], isolate: false } },
      {
        extends: true,
        test: {
          name: "int",
          include: ["test/int/**/*.test.ts"],
          // one module graph per worker process, not one per file: importing LangGraph, LangChain,
          // PGlite (and compiling its WebAssembly) again for each of 60+ files cost about 40% of
          // the suite's CPU. Files share no state: each opens its own schemas, data directories,
          // servers and children and closes them, and restores any environment variable it sets.
          isolate: false,
          // builds dist/ and the fixture programs, makes the migrated PGlite template; runs only
          // when an integration file is selected, so `npm test -- test/unit` stays quick
          globalSetup: ["test/setup/global-setup.ts"],
          // V8's baseline tier only for WebAssembly in the test workers, as the short-lived CLI
          // commands run (src/cli/v8-flags.ts): each embedded database a file opens is a new PGlite
          // instance whose WebAssembly V8 would otherwise recompile with its optimizing tier in the
          // background; measured on run-store and checkpoint-conformance, 10-13% less CPU and less wall
          execArgv: ["--liftoff-only"],
        },
      },
    ],
  },
});
