/** Commands that live long: they keep V8's optimizing tier for the embedded engine. */
const LONG_LIVED_COMMANDS = new Set(["serve", "worker"]);

/**
 * The V8 flags for a CLI invocation (its arguments after the script). A short-lived command
 * (`run`, `show`, `approve`, `demo`, …) gets `--liftoff-only`: V8 compiles PGlite's WebAssembly
 * with its baseline tier only, instead of recompiling it with its optimizing tier in the
 * background, which was half of such a command's CPU on the embedded database (`devmind runs`:
 * 6.2 -> 2.6 CPU-s, 2.8 -> 1.9 s). `serve` and `worker` keep the optimizing tier, which pays off
 * over a long life. ./apply-v8-flags.ts sets them before any module loads.
 */
export function v8FlagsFor(argv: readonly string[]): string[] {
  const command = argv.find((arg) => !arg.startsWith("-"));
  return command !== undefined && LONG_LIVED_COMMANDS.has(command) ? [] : ["--liftoff-only"];
}
