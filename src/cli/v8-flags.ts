/** Commands that live long: they keep V8's optimizing tier for the embedded engine. */
const LONG_LIVED_COMMANDS = new Set(["serve", "worker"]);

/**
 * The V8 flags for a CLI invocation (its arguments after the script): `--liftoff-only` for a
 * short-lived command (`run`, `show`, `approve`, `demo`, …)
 * before anything compiles PGlite's WebAssembly: V8 then compiles the embedded database engine
 * with its baseline tier only, instead of recompiling it with its optimizing tier in the
 * background, which was half of such a command's CPU on the embedded database (`devmind runs`:
 * 6.2 -> 2.6 CPU-s, 2.8 -> 1.9 s). `serve` and `worker` keep the optimizing tier, which pays off
 * over a long life. ./apply-v8-flags.ts sets them.
 */
export function v8FlagsFor(argv: readonly string[]): string[] {
  const command = argv.find((arg) => !arg.startsWith("-"));
  return command !== undefined && LONG_LIVED_COMMANDS.has(command) ? [] : ["--liftoff-only"];
}

