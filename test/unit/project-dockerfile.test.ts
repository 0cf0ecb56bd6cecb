import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { installCommand, projectCompose, projectDockerfile, projectDockerignore, type ProjectFacts } from "../../src/cli/project-dockerfile.js";

const FACTS: ProjectFacts = {
  configPath: "/home/me/my-graphs/langgraph.json",
  dir: "/home/me/my-graphs",
  configFile: "langgraph.json",
  nodeVersion: "22",
  dockerfileLines: ["RUN echo extra > extra.txt"],
  packageManager: "npm",
  locked: true,
  gitDependencies: false,
  envFile: ".env",
  notes: [],
};

/** The instructions of each stage of a Dockerfile: `FROM … AS name` starts one (continuation lines joined, comments dropped). */
function stages(dockerfile: string): { name: string; from: string; lines: string[] }[] {
  const logical = dockerfile.replace(/\\\n/g, " ").split("\n").map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#"));
  const result: { name: string; from: string; lines: string[] }[] = [];
  for (const line of logical) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
    if (from !== null) result.push({ name: from[2] ?? "", from: from[1] as string, lines: [] });
    else if (result.length > 0) result.at(-1)?.lines.push(line);
  }
  return result;
}

describe("devmind dockerfile: the image of a langgraph.json project", () => {
  const text = projectDockerfile(FACTS);
  const [build, runtime] = stages(text);

  it("builds on node_version's slim image: the project copied, installed from its lockfile, dockerfile_lines, dev dependencies dropped, then every graph loaded", () => {
    expect(text).toMatch(/^ARG NODE_IMAGE=node:22-bookworm-slim$/m);
    expect(stages(text).map((stage) => [stage.name, stage.from])).toEqual([
      ["build", "${NODE_IMAGE}"],
      ["runtime", "${NODE_IMAGE}"],
    ]);
    expect(build?.lines).toEqual([
      "WORKDIR /deps/my-graphs",
      "COPY . .",
      "RUN npm ci --no-audit --no-fund",
      "RUN echo extra > extra.txt",
      "RUN npm prune --omit=dev --no-audit --no-fund",
      'RUN test -f ".env" || : > ".env"',
      'RUN /deps/my-graphs/node_modules/.bin/devmind graphs --config "langgraph.json"',
    ]);
  });

  it("runs `devmind serve --config` from the project's own devmind as the non-root node user, copying what the build made", () => {
    const lines = runtime?.lines ?? [];
    expect(lines.filter((line) => line.startsWith("COPY"))).toEqual(["COPY --from=build /deps/my-graphs /deps/my-graphs"]);
    expect(lines.some((line) => /\bnpm (ci|install)\b/.test(line))).toBe(false);
    const userAt = lines.indexOf("USER node");
    expect(userAt).toBeGreaterThan(-1);
    expect(lines.slice(userAt).some((line) => line.startsWith("RUN "))).toBe(false);
    expect(lines.find((line) => line.startsWith("ENV "))).toMatch(/DEVMIND_HOST=0\.0\.0\.0 .*DEVMIND_PORT=8787 .*DEVMIND_DATA_DIR=\/data/);
    expect(lines).toContain('ENTRYPOINT ["/deps/my-graphs/node_modules/.bin/devmind"]');
    expect(lines.at(-1)).toBe('CMD ["serve", "--config", "langgraph.json"]');
    expect(text.split("\n")[0]).toContain("made by `devmind dockerfile`");
  });

  it("installs with the lockfile's package manager, and git first when a dependency comes from git", () => {
    expect(installCommand({ packageManager: "npm", locked: false })).toBe("npm install --no-audit --no-fund");
    expect(installCommand({ packageManager: "pnpm", locked: true })).toBe("corepack enable && pnpm install --frozen-lockfile");
    expect(installCommand({ packageManager: "yarn", locked: true })).toBe("corepack enable && yarn install --frozen-lockfile");
    const git = stages(projectDockerfile({ ...FACTS, packageManager: "pnpm", gitDependencies: true, envFile: null, dockerfileLines: [] }))[0]?.lines ?? [];
    expect(git[0]).toMatch(/^RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates/);
    // no npm prune for another package manager, no env file placeholder without an env file
    expect(git.slice(1)).toEqual(["WORKDIR /deps/my-graphs", "COPY . .", "RUN corepack enable && pnpm install --frozen-lockfile", 'RUN /deps/my-graphs/node_modules/.bin/devmind graphs --config "langgraph.json"']);
  });

  it("composes PostgreSQL 16 and the project: serve once postgres is healthy, keys from env files, loopback port, bounded restarts", () => {
    const compose = parse(projectCompose(FACTS, { context: ".", dockerfile: "Dockerfile" })) as { name: string; services: Record<string, Record<string, unknown>>; volumes: Record<string, unknown> };
    expect(compose.name).toBe("my-graphs");
    expect(Object.keys(compose.services).sort()).toEqual(["graphs", "postgres"]);
    const graphs = compose.services["graphs"] as Record<string, unknown>;
    expect(compose.services["postgres"]?.["image"]).toBe("postgres:16");
    expect(graphs["build"]).toEqual({ context: ".", dockerfile: "Dockerfile" });
    expect(graphs["depends_on"]).toEqual({ postgres: { condition: "service_healthy" } });
    expect(graphs["env_file"]).toEqual([{ path: ".env", required: false }]);
    expect((graphs["environment"] as Record<string, string>)["DATABASE_URL"]).toBe("postgres://devmind:${POSTGRES_PASSWORD:-devmind}@postgres:5432/devmind");
    expect(graphs["ports"]).toEqual(["127.0.0.1:${DEVMIND_HOST_PORT:-8787}:8787"]);
    expect(graphs["restart"]).toBe("on-failure:3");
    expect(Object.keys(compose.volumes).sort()).toEqual(["pgdata", "workspace"]);
    // a project's own env file comes first; a compose file beside a Dockerfile elsewhere points back at the project
    const elsewhere = parse(projectCompose({ ...FACTS, envFile: "config/graphs.env" }, { context: "../my-graphs", dockerfile: "../docker/Dockerfile" })) as typeof compose;
    expect(elsewhere.services["graphs"]?.["env_file"]).toEqual([
      { path: "../my-graphs/config/graphs.env", required: false },
      { path: "../my-graphs/.env", required: false },
    ]);
  });

  it("keeps secrets, installs and local data out of the build context", () => {
    const ignored = projectDockerignore({ ...FACTS, envFile: "secrets/graph.env" }).split("\n");
    for (const entry of ["node_modules", ".git", ".env", ".env.*", ".devmind", "secrets/graph.env"]) expect(ignored).toContain(entry);
  });
});
