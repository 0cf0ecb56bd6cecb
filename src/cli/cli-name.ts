import { basename, sep } from "node:path";

/**
 * How to spell the devmind command in the follow-up commands the CLI prints (`devmind approve
 * RUN_ID`, …): `devmind` when it was started as a command on PATH (a global install), else
 * `npx devmind` — a local install (`node_modules/.bin/devmind`), `npx devmind`, `npm run demo`, or
 * `node dist/src/cli/main.js` in a checkout, where a bare `devmind` is not found by the shell.
 *
 * Reads `npm_command` (set by npm for `npx` and `npm run`), which is how npm says it started us,
 * not devmind configuration, so it is read here rather than in config.ts.
 */
export function cliName(argv: readonly string[] = process.argv, env: NodeJS.ProcessEnv = process.env): string {
  if (env["npm_command"] !== undefined && env["npm_command"] !== "") return "npx devmind";
  const script = argv[1] ?? "";
  if (script.includes(`${sep}node_modules${sep}.bin${sep}`)) return "npx devmind";
  return basename(script) === "devmind" ? "devmind" : "npx devmind";
}
