/**
 * Every CLI flag and every environment variable the docs name exists — README.md, docs/*.md,
 * bench/README.md and the examples' READMEs: flags on the command the docs give them to (read from
 * the commander program the CLI runs), variables in devmind's configuration schema or in the file
 * that reads them (tests, benchmarks, compose files). docs/cli.md's command reference names every
 * command and flag the CLI has.
 */
import { readdirSync, readFileSync } from "node:fs";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/cli-commands.js";
import { ENV_SCHEMA } from "../../src/config-schema.js";
import { VARIABLE_ALIASES } from "../../src/config.js";

const ROOT = new URL("../../", import.meta.url);
const read = (name: string): string => readFileSync(new URL(name, ROOT), "utf8");
/** The user docs: README.md, every docs/*.md, bench/README.md and each example's README.md. */
const DOC_FILES = [
  "README.md",
  ...readdirSync(new URL("docs/", ROOT)).filter((file) => file.endsWith(".md")).map((file) => `docs/${file}`),
  "bench/README.md",
  ...readdirSync(new URL("examples/", ROOT), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => `examples/${entry.name}/README.md`),
];
/** Each doc with its text, for messages that name the file. */
const DOCS = DOC_FILES.map((file) => ({ file, text: read(file) }));
const ALL_DOCS = DOCS.map((doc) => doc.text).join("\n");
/** The command reference (every command and flag) lives in docs/cli.md. */
const CLI_REFERENCE = read("docs/cli.md");

/** Variables README names that are not devmind's configuration, and the file that reads each. */
const OTHER_VARIABLES: Record<string, string[]> = {
  DEVMIND_TEST_DATABASE_URL: ["test/helpers/databases.ts"],
  DEVMIND_REQUIRE_POSTGRES: ["test/helpers/databases.ts", ".ci/run"],
  DEVMIND_TEST_ALL_ON_PGLITE: ["test/helpers/databases.ts"],
  DEVMIND_REQUIRE_CHROMIUM: ["test/helpers/browser.ts", ".ci/run"],
  DEVMIND_TEST_CHROMIUM: ["test/helpers/browser.ts"],
  DEVMIND_REQUIRE_NETNS: ["test/int/partition.int.test.ts", ".ci/run"],
  DEVMIND_BENCH_DATABASE_URL: ["bench/bench-env.ts"],
  DEVMIND_TEST_CPU_LOG: ["test/setup/cpu-probe.ts", ".ci/run"],
  DEVMIND_HOST_PORT: ["docker-compose.yml"],
  POSTGRES_HOST_PORT: ["docker-compose.postgres-port.yml"],
  POSTGRES_PASSWORD: ["docker-compose.yml"],
  NODE_ENV: ["Dockerfile"],
};

/** The code README shows: inline spans and the lines of fenced blocks. */
function codeFragments(markdown: string): string[] {
  const fragments: string[] = [];
  const fenced = /```[a-z]*\n([\s\S]*?)```/g;
  for (const block of markdown.matchAll(fenced)) fragments.push(...(block[1] as string).split("\n"));
  const prose = markdown.replace(fenced, "");
  for (const span of prose.matchAll(/`([^`\n]+)`/g)) fragments.push(span[1] as string);
  return fragments;
}

/** `devmind CMD [SUB] … --flag …` in one fragment: the command path and the flags after it (up to a pipe or the next command). */
function commandFlags(fragment: string): { path: string[]; flags: string[] }[] {
  const found: { path: string[]; flags: string[] }[] = [];
  for (const part of fragment.split(/\s(?:\||&&|;)\s|(?=\bdevmind\s)/)) {
    const match = /\bdevmind\s+([a-z][a-z-]*)(?:\s+([a-z][a-z-]*))?/.exec(part);
    if (match === null) continue;
    const rest = part.slice((match.index ?? 0) + match[0].length);
    const flags = [...`${match[2] ?? ""} ${rest}`.matchAll(/(?:^|[\s[(|])(--[a-z][a-z-]*|-[a-zA-Z])\b/g)].map((m) => m[1] as string);
    found.push({ path: [match[1] as string, ...(match[2] === undefined ? [] : [match[2]])], flags });
  }
  return found;
}

function optionNames(command: Command): Set<string> {
  const names = new Set<string>(["--help", "-h"]);
  for (const option of command.options) {
    if (option.long !== undefined) names.add(option.long);
    if (option.short !== undefined) names.add(option.short);
    // commander's negatable `--no-x` is declared as such
  }
  return names;
}

describe("the docs name only what exists", () => {
  const program = buildProgram(() => undefined);
  const commands = new Map(program.commands.map((command) => [command.name(), command]));

  it("every `devmind COMMAND --flag` in the docs is a flag of that command", () => {
    const problems: string[] = [];
    let checked = 0;
    for (const { file, text } of DOCS) for (const fragment of codeFragments(text).map((code) => `${code}\u0000${file}`)) {
      for (const { path, flags } of commandFlags(fragment)) {
        let command = commands.get(path[0] as string);
        if (command === undefined) {
          // `devmind --version`, prose such as "devmind runs any graph": only words that look like commands are checked
          if (path[0] !== undefined && /^(run|runs|approve|reject|resume|cancel|show|events|worker|serve|migrate|demo|graphs|crons|dockerfile|build)$/.test(path[0])) problems.push(`no command "${path[0]}": ${fragment.replace("\u0000", " in ")}`);
          continue;
        }
        const sub = path[1] === undefined ? undefined : command.commands.find((candidate) => candidate.name() === path[1]);
        if (sub !== undefined) command = sub;
        const known = optionNames(command);
        for (const flag of flags) {
          checked += 1;
          if (!known.has(flag)) problems.push(`devmind ${command.name()} has no ${flag}: ${fragment.replace("\u0000", " in ")}`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(60);
  });

  it("every --flag the docs name on their own is a flag of some devmind command, or of the benchmarks (npm run bench / conformance)", () => {
    const every = new Set<string>(["--version", "-V"]);
    for (const command of program.commands) {
      for (const name of optionNames(command)) every.add(name);
      for (const sub of command.commands) for (const name of optionNames(sub)) every.add(name);
    }
    const alone = codeFragments(ALL_DOCS)
      .filter((fragment) => /^--[a-z][a-z-]*(\s|=|$)/.test(fragment.trim()))
      .map((fragment) => /^(--[a-z][a-z-]*)/.exec(fragment.trim())?.[1] as string);
    const bench = readdirSync(new URL("bench/", ROOT), { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".ts"))
      .map((file) => read(`bench/${file}`))
      .join("\n");
    expect(alone.length).toBeGreaterThan(5);
    expect(alone.filter((flag) => !every.has(flag) && !new RegExp(`${flag}\\b(?!-)`).test(bench))).toEqual([]);
  });

  it("docs/cli.md's command reference names every command and every flag the CLI has (hidden internal ones aside)", () => {
    const start = CLI_REFERENCE.indexOf("## Commands");
    expect(start).toBeGreaterThan(-1);
    const reference = CLI_REFERENCE.slice(start, CLI_REFERENCE.indexOf("\n## ", start + 1));
    const missing: string[] = [];
    for (const command of program.commands) {
      if (!reference.includes(`devmind ${command.name()}`)) missing.push(`devmind ${command.name()}`);
      for (const each of command.commands.length > 0 ? command.commands : [command]) {
        for (const option of each.options) if (!option.hidden && option.long !== undefined && !reference.includes(option.long)) missing.push(`devmind ${command.name()}${each === command ? "" : ` ${each.name()}`} ${option.long}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("every environment variable the docs name is read by devmind's configuration or by the file that uses it", () => {
    const schema = new Set(Object.keys(ENV_SCHEMA.shape));
    const aliases = new Set(Object.values(VARIABLE_ALIASES));
    const names = new Set([...ALL_DOCS.matchAll(/\b(?:DEVMIND|OPENAI|LLM|LANGGRAPH|POSTGRES)_[A-Z0-9_]*[A-Z0-9]\b|\b(?:DATABASE_URL|LOG_LEVEL|NODE_ENV)\b/g)].map((m) => m[0]));
    const problems: string[] = [];
    for (const name of names) {
      if (schema.has(name) || aliases.has(name)) continue;
      const files = OTHER_VARIABLES[name];
      if (files === undefined) problems.push(`${name}: not a configuration variable, and no file is known to read it`);
      else for (const file of files) if (!read(file).includes(name)) problems.push(`${name}: not in ${file}`);
    }
    // `DEVMIND_STORE_*` and the like: a prefix some variable has
    for (const prefix of ALL_DOCS.matchAll(/\b([A-Z][A-Z0-9]*_[A-Z0-9_]*_)\*/g)) {
      if (![...schema].some((name) => name.startsWith(prefix[1] as string))) problems.push(`${prefix[1]}*: no variable has this prefix`);
    }
    expect(problems).toEqual([]);
    expect(names.size).toBeGreaterThan(30);
  });
});
