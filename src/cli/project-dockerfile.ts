/**
 * `devmind dockerfile` / `devmind build`: the image of a user's `langgraph.json` project, as the
 * LangGraph CLI makes one — the project's dependencies installed (devmind among them), every
 * graph loaded once at build time (a graph whose imports are missing fails the build, naming
 * it), `devmind serve` at start (which applies pending migrations first) — and a compose file
 * with PostgreSQL. Pure text from what `readProjectFacts` found; nothing here runs Docker.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, isAbsolute, relative, resolve } from "node:path";
import { ConfigError } from "../errors.js";
import { readLanggraphConfig } from "../graphs/langgraph-config.js";
import { DOCKER_DEFAULTS } from "../constants.js";

/** The package managers a project's lockfile names, and how each installs in the image. */
export type PackageManager = "npm" | "yarn" | "pnpm";

/** What the Dockerfile is made from: the project as found on disk. */
export interface ProjectFacts {
  /** Absolute path of `langgraph.json`. */
  configPath: string;
  /** The project directory (the config's): the build context. */
  dir: string;
  /** `langgraph.json` relative to `dir` (what `--config` says in the image). */
  configFile: string;
  /** `node_version` of the config, or devmind's default. */
  nodeVersion: string;
  /** `dockerfile_lines`, added to the build stage after the install. */
  dockerfileLines: string[];
  /** The lockfile's package manager; `installCommand` follows from it. */
  packageManager: PackageManager;
  /** True when a lockfile is there (then a frozen install). */
  locked: boolean;
  /** True when a dependency comes from git (the build stage then installs git). */
  gitDependencies: boolean;
  /** `env` of the config when it names a file (relative to `dir`): an empty one stands in, in the image. */
  envFile: string | null;
  /** Non-fatal remarks for stderr (e.g. `dependencies` entries that are not paths). */
  notes: string[];
}

const NODE_VERSIONS = new Set(["20", "22", "24"]);

function readJson(path: string, what: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(readFileSync(path, "utf8"));
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(`${what} ${path} cannot be read as JSON: ${(error as Error).message}`, { path });
  }
  throw new ConfigError(`${what} ${path} is not a JSON object`, { path });
}

function stringList(path: string, key: string, value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) throw new ConfigError(`${path}: ${key}: expected a list of strings`, { path, key });
  return value as string[];
}

function inside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/**
 * Reads what the image needs from a project: its `langgraph.json` (checked as every command
 * checks it), `node_version`, `dockerfile_lines`, `dependencies` (local paths must lie inside
 * the project: the build context), its `package.json` (which must list `devmind` under
 * `dependencies`, from a tarball or git; a `file:` dependency outside the project cannot reach
 * the build) and lockfile. Each refusal is a ConfigError naming the file and what to do (exit 2).
 */
export function readProjectFacts(configPath: string): ProjectFacts {
  const config = readLanggraphConfig(configPath);
  const dir = config.dir;
  const raw = readJson(configPath, "the LangGraph config");
  const notes: string[] = [];
  const nodeVersion = raw["node_version"] === undefined ? DOCKER_DEFAULTS.nodeVersion : String(raw["node_version"]);
  if (!NODE_VERSIONS.has(nodeVersion)) throw new ConfigError(`${configPath}: node_version: expected "20", "22" or "24" (LangGraph's choices; devmind needs Node >= 20)`, { path: configPath, key: "node_version" });
  const dockerfileLines = stringList(configPath, "dockerfile_lines", raw["dockerfile_lines"]);
  for (const dependency of stringList(configPath, "dependencies", raw["dependencies"])) {
    if (!dependency.startsWith(".")) {
      notes.push(`${configPath}: dependencies: "${dependency}" is not a path; npm packages come from package.json`);
      continue;
    }
    const path = resolve(dir, dependency);
    if (!existsSync(path)) throw new ConfigError(`${configPath}: dependencies: ${path} does not exist`, { path: configPath, key: "dependencies" });
    if (!inside(dir, path)) throw new ConfigError(`${configPath}: dependencies: ${path} is outside the project directory ${dir}, which is what the image is built from`, { path: configPath, key: "dependencies" });
  }
  const packagePath = resolve(dir, "package.json");
  if (!existsSync(packagePath)) throw new ConfigError(`no package.json next to ${configPath}: the image installs the project with its package manager (npm init -y, then npm install devmind from its tarball or git)`, { path: packagePath });
  const pkg = readJson(packagePath, "the project's");
  const dependencies = (pkg["dependencies"] ?? {}) as Record<string, unknown>;
  const devDependencies = (pkg["devDependencies"] ?? {}) as Record<string, unknown>;
  const spec = dependencies["devmind"];
  if (typeof spec !== "string") {
    const where = typeof devDependencies["devmind"] === "string" ? " (it is under devDependencies, which the image leaves out: move it to dependencies)" : "";
    throw new ConfigError(`${packagePath}: devmind is not among "dependencies"${where}; the image runs the project's own devmind: npm install /path/to/devmind-VERSION.tgz (made by npm pack in devmind's checkout) or npm install git+https://HOST/OWNER/devmind.git`, { path: packagePath, key: "dependencies.devmind" });
  }
  let gitDependencies = false;
  for (const [name, value] of Object.entries(dependencies)) {
    if (typeof value !== "string") continue;
    if (/^(git\+|git:|github:|gitlab:|bitbucket:)/.test(value) || /^[\w.-]+\/[\w.-]+(#.*)?$/.test(value)) gitDependencies = true;
    const local = /^(file:|link:)(.*)$/.exec(value)?.[2] ?? (value.startsWith(".") || value.startsWith("/") ? value : null);
    if (local !== null && !inside(dir, resolve(dir, local))) {
      throw new ConfigError(
        `${packagePath}: dependency ${name} ("${value}") lies outside the project directory ${dir}, so the image build cannot see it; copy it into the project (e.g. vendor/${basename(local)}) and npm install it from there`,
        { path: packagePath, key: `dependencies.${name}` },
      );
    }
  }
  const packageManager: PackageManager = existsSync(resolve(dir, "pnpm-lock.yaml")) ? "pnpm" : existsSync(resolve(dir, "yarn.lock")) ? "yarn" : "npm";
  const locked = packageManager !== "npm" || existsSync(resolve(dir, "package-lock.json"));
  const envFile = typeof raw["env"] === "string" ? relative(dir, resolve(dir, raw["env"])) : null;
  if (envFile !== null && !inside(dir, resolve(dir, envFile))) throw new ConfigError(`${configPath}: env: ${envFile} is outside the project directory; pass its variables to the container instead (compose env_file) and drop the key`, { path: configPath, key: "env" });
  return { configPath, dir, configFile: relative(dir, configPath), nodeVersion, dockerfileLines, packageManager, locked, gitDependencies, envFile, notes };
}

/** The install step of the build stage for the project's package manager. */
export function installCommand(facts: Pick<ProjectFacts, "packageManager" | "locked">): string {
  if (facts.packageManager === "pnpm") return "corepack enable && pnpm install --frozen-lockfile";
  if (facts.packageManager === "yarn") return "corepack enable && yarn install --frozen-lockfile";
  return facts.locked ? "npm ci --no-audit --no-fund" : "npm install --no-audit --no-fund";
}

function quoteArg(value: string): string {
  return JSON.stringify(value);
}

/** The project's working directory in the image. */
export function imageWorkdir(facts: Pick<ProjectFacts, "dir">): string {
  const name = basename(facts.dir).replace(/[^A-Za-z0-9._-]/g, "-") || "app";
  return `/deps/${name}`;
}

/**
 * The Dockerfile: a build stage (the project copied, its dependencies installed from its
 * lockfile, `dockerfile_lines`, development dependencies dropped with npm, then `devmind graphs`
 * — every graph must load, or the build stops naming it) and a runtime stage (the built project,
 * a non-root user, `devmind serve --config …`, which applies pending migrations before it
 * listens, with workers in the same process).
 */
export function projectDockerfile(facts: ProjectFacts): string {
  const workdir = imageWorkdir(facts);
  const config = quoteArg(facts.configFile);
  const bin = `${workdir}/node_modules/.bin/devmind`;
  const lines = [
    `# The image of the LangGraph project in ${basename(facts.dir)}/, made by \`devmind dockerfile\` from ${facts.configFile}:`,
    "# regenerate it rather than edit it (dockerfile_lines in langgraph.json add build steps).",
    `#   docker build -t my-graphs .        (or: devmind build -t my-graphs)`,
    "#   docker run --rm -p 127.0.0.1:8787:8787 -e DATABASE_URL=postgres://… -e DEVMIND_API_KEYS=me=… my-graphs",
    "# `serve` applies pending migrations, then serves every graph of the config with workers.",
    "",
    `ARG NODE_IMAGE=node:${facts.nodeVersion}-bookworm-slim`,
    "",
    "# --- build: the project's dependencies (devmind among them), then every graph loaded once ---",
    "FROM ${NODE_IMAGE} AS build",
    ...(facts.gitDependencies ? ["# a dependency comes from git: npm needs git for it", "RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates && rm -rf /var/lib/apt/lists/*"] : []),
    `WORKDIR ${workdir}`,
    "COPY . .",
    `RUN ${installCommand(facts)}`,
    ...facts.dockerfileLines,
    ...(facts.packageManager === "npm" ? ["RUN npm prune --omit=dev --no-audit --no-fund"] : []),
    ...(facts.envFile === null ? [] : [`# ${facts.envFile} stays out of the image (.dockerignore): its variables come from the container's environment`, `RUN test -f ${quoteArg(facts.envFile)} || : > ${quoteArg(facts.envFile)}`]),
    "# a graph whose module or imports are missing stops the build here, naming the graph and the cause",
    `RUN ${bin} graphs --config ${config}`,
    "",
    "# --- runtime: the built project, no compiler run, a non-root user ---",
    "FROM ${NODE_IMAGE} AS runtime",
    "ENV NODE_ENV=production \\",
    "    DEVMIND_HOST=0.0.0.0 \\",
    `    DEVMIND_PORT=${DOCKER_DEFAULTS.port} \\`,
    "    DEVMIND_WORKSPACE=/workspace \\",
    "    DEVMIND_DATA_DIR=/data",
    `WORKDIR ${workdir}`,
    `COPY --from=build ${workdir} ${workdir}`,
    "RUN mkdir -p /workspace /data && chown node:node /workspace /data",
    "USER node",
    `EXPOSE ${DOCKER_DEFAULTS.port}`,
    "HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \\",
    `  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.DEVMIND_PORT || ${DOCKER_DEFAULTS.port}) + '/ok').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]`,
    "# `serve` drains on SIGTERM: runs stop at a step boundary and go back to the queue",
    "STOPSIGNAL SIGTERM",
    `ENTRYPOINT [${quoteArg(bin)}]`,
    `CMD ["serve", "--config", ${config}]`,
  ];
  return `${lines.join("\n")}\n`;
}

/** The compose file beside the Dockerfile: PostgreSQL 16 and the project's image, as devmind's own docker-compose.yml. */
export function projectCompose(facts: ProjectFacts, build: { context: string; dockerfile: string }): string {
  const name = basename(facts.dir).toLowerCase().replace(/[^a-z0-9_-]/g, "-") || "graphs";
  // relative to the compose file, like the build context
  const envFiles = [...new Set([...(facts.envFile === null ? [] : [facts.envFile]), ".env"])].map((file) => (build.context === "." ? file : `${build.context}/${file}`));
  return [
    `# PostgreSQL and the LangGraph project in ${basename(facts.dir)}/ served by devmind, made by \`devmind dockerfile --add-docker-compose\`.`,
    "#   docker compose up -d --build     then http://127.0.0.1:8787 (API key: the part after \"name=\" in DEVMIND_API_KEYS)",
    "# Keys come from the env files below (never from this file): set DEVMIND_API_KEYS and your model's key there.",
    `name: ${name}`,
    "",
    "services:",
    "  postgres:",
    "    image: postgres:16",
    "    environment:",
    "      POSTGRES_USER: devmind",
    "      POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-devmind}",
    "      POSTGRES_DB: devmind",
    "    volumes:",
    "      - pgdata:/var/lib/postgresql/data",
    "    healthcheck:",
    '      test: ["CMD-SHELL", "pg_isready -U devmind -d devmind"]',
    "      interval: 5s",
    "      timeout: 3s",
    "      retries: 20",
    "    restart: unless-stopped",
    "",
    "  graphs:",
    "    build:",
    `      context: ${build.context}`,
    `      dockerfile: ${build.dockerfile}`,
    `    image: ${name}:local`,
    "    env_file:",
    ...envFiles.flatMap((file) => [`      - path: ${file}`, "        required: false"]),
    "    environment:",
    "      DATABASE_URL: postgres://devmind:${POSTGRES_PASSWORD:-devmind}@postgres:5432/devmind",
    "      DEVMIND_HOST: 0.0.0.0",
    `      DEVMIND_PORT: "${DOCKER_DEFAULTS.port}"`,
    "    ports:",
    `      - "127.0.0.1:\${DEVMIND_HOST_PORT:-${DOCKER_DEFAULTS.port}}:${DOCKER_DEFAULTS.port}"`,
    "    volumes:",
    "      - workspace:/workspace",
    "    depends_on:",
    "      postgres:",
    "        condition: service_healthy",
    "    # a configuration error (exit 2) is not fixed by restarting: give up after 3 tries",
    "    restart: on-failure:3",
    "    stop_grace_period: 40s",
    "",
    "volumes:",
    "  pgdata:",
    "  workspace:",
    "",
  ].join("\n");
}

/** A `.dockerignore` for the project (written only where none exists): secrets, installs and outputs stay out. */
export function projectDockerignore(facts: ProjectFacts): string {
  const lines = ["# made by devmind dockerfile: what stays out of the image", "node_modules", ".git", ".env", ".env.*", ".devmind", "workspace", "*.log", "Dockerfile", "docker-compose.yml"];
  if (facts.envFile !== null && !lines.includes(facts.envFile)) lines.push(facts.envFile);
  return `${lines.join("\n")}\n`;
}

/** Where the compose file goes: next to the Dockerfile (its build context and Dockerfile are relative to it). */
export function composePathFor(dockerfilePath: string): string {
  return resolve(dirname(dockerfilePath), "docker-compose.yml");
}
