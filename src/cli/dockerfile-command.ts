import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import type { Command } from "commander";
import { DOCKER_DEFAULTS, GRAPHS_DEFAULTS } from "../constants.js";
import { ConfigError } from "../errors.js";
import { findLanggraphConfig } from "../graphs/langgraph-config.js";
import { EXIT } from "./exit-codes.js";
import { composePathFor, projectCompose, projectDockerfile, projectDockerignore, readProjectFacts, type ProjectFacts } from "./project-dockerfile.js";

/** The first line of every Dockerfile devmind writes: a file without it is never overwritten. */
const GENERATED_MARK = "made by `devmind dockerfile";

/** The project's config: `--config`, else ./langgraph.json; a ConfigError without one (there is nothing to put in an image). */
function projectConfig(explicit: string | undefined): string {
  const path = findLanggraphConfig(explicit);
  if (path === null) throw new ConfigError(`no ${GRAPHS_DEFAULTS.configFile} here (${process.cwd()}): run this in your LangGraph project, or name its config with --config`, { variables: ["--config"] });
  return path;
}

function notesOf(facts: ProjectFacts): void {
  for (const note of facts.notes) process.stderr.write(`devmind: note: ${note}\n`);
}

/** Writes `text` to `path` unless a file there was not written by devmind (then CONFIG_INVALID, nothing touched). */
function writeGenerated(path: string, text: string, force: boolean): void {
  if (existsSync(path) && !force && !readFileSync(path, "utf8").split("\n", 3).join("\n").includes(GENERATED_MARK)) {
    throw new ConfigError(`${path} exists and was not made by devmind dockerfile; it is left as it is (name another path, or --force to replace it)`, { path });
  }
  writeFileSync(path, text);
}

/**
 * Registers `devmind dockerfile [SAVE_PATH] [--config PATH] [--add-docker-compose] [--force]`
 * and `devmind build -t TAG [--config PATH] [--pull] [--no-cache]`, as the LangGraph CLI's
 * `dockerfile` and `build`: the image of the project's `langgraph.json` (see
 * project-dockerfile.ts). `dockerfile -` prints it; `--add-docker-compose` also writes
 * docker-compose.yml (PostgreSQL + the project) and, where none exists, .dockerignore. `build`
 * runs `docker build` on the project directory with the generated file (kept out of the project);
 * without docker on PATH it exits 2 saying so.
 */
export function registerDockerfileCommands(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("dockerfile")
    .description("write a Dockerfile for the LangGraph project of ./langgraph.json (or --config): its dependencies, graphs and devmind serve")
    .argument("[save-path]", `where to write it (- for stdout)`, DOCKER_DEFAULTS.dockerfile)
    .option("-c, --config <path>", `the LangGraph config file (default ./${GRAPHS_DEFAULTS.configFile})`)
    .option("--add-docker-compose", "also write docker-compose.yml (PostgreSQL + this project) and, if missing, .dockerignore")
    .option("--force", "replace a Dockerfile that devmind did not write")
    .action((savePath: string, options: { config?: string; addDockerCompose?: boolean; force?: boolean }) => {
      const facts = readProjectFacts(projectConfig(options.config));
      notesOf(facts);
      const dockerfile = projectDockerfile(facts);
      if (savePath === "-") {
        process.stdout.write(dockerfile);
        setExitCode(EXIT.success);
        return;
      }
      const target = resolve(process.cwd(), savePath);
      writeGenerated(target, dockerfile, options.force === true);
      process.stdout.write(`wrote ${target}\n`);
      if (options.addDockerCompose === true) {
        const composePath = composePathFor(target);
        const context = relative(dirname(composePath), facts.dir) || ".";
        writeGenerated(composePath, projectCompose(facts, { context, dockerfile: relative(facts.dir, target) }), options.force === true);
        process.stdout.write(`wrote ${composePath}\n`);
        const ignorePath = join(facts.dir, ".dockerignore");
        if (!existsSync(ignorePath)) {
          writeFileSync(ignorePath, projectDockerignore(facts));
          process.stdout.write(`wrote ${ignorePath}\n`);
        }
      }
      setExitCode(EXIT.success);
    });

  program
    .command("build")
    .description("build a Docker image of the LangGraph project of ./langgraph.json (or --config) with devmind serve")
    .requiredOption("-t, --tag <tag>", "the image's name and tag")
    .option("-c, --config <path>", `the LangGraph config file (default ./${GRAPHS_DEFAULTS.configFile})`)
    .option("--pull", "pull the latest base image")
    .option("--no-cache", "build without Docker's cache")
    .action(async (options: { tag: string; config?: string; pull?: boolean; cache?: boolean }) => {
      const facts = readProjectFacts(projectConfig(options.config));
      notesOf(facts);
      const scratch = mkdtempSync(join(tmpdir(), "devmind-build-"));
      try {
        const dockerfile = join(scratch, "Dockerfile");
        writeFileSync(dockerfile, projectDockerfile(facts));
        // BuildKit reads <Dockerfile>.dockerignore first: the project's own .dockerignore wins when it has one
        if (!existsSync(join(facts.dir, ".dockerignore"))) writeFileSync(`${dockerfile}.dockerignore`, projectDockerignore(facts));
        const args = ["build", "-f", dockerfile, "-t", options.tag, ...(options.pull === true ? ["--pull"] : []), ...(options.cache === false ? ["--no-cache"] : []), facts.dir];
        process.stderr.write(`devmind: docker ${args.join(" ")}\n`);
        setExitCode(await dockerBuild(args));
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    });
}

/** Runs docker with the terminal's output; 0 when the build succeeded, 1 when it failed, CONFIG_INVALID without docker. */
function dockerBuild(args: string[]): Promise<number> {
  return new Promise((done, fail) => {
    const child = spawn("docker", args, { stdio: "inherit" });
    child.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") fail(new ConfigError("docker is not on PATH: install Docker, or write the Dockerfile with `devmind dockerfile` and build it where Docker runs", { variables: ["PATH"] }));
      else fail(error);
    });
    child.once("close", (code) => done(code === 0 ? EXIT.success : EXIT.runFailed));
  });
}
