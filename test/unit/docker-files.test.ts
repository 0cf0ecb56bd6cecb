import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

// Docker does not run where the tests run: these checks read the files as Docker would.
const ROOT = new URL("../../", import.meta.url);
const read = (name: string): string => readFileSync(new URL(name, ROOT), "utf8");

interface Service {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  entrypoint?: unknown;
  environment?: Record<string, string>;
  env_file?: { path: string; required?: boolean }[];
  ports?: string[];
  volumes?: string[];
  restart?: string;
  depends_on?: Record<string, { condition: string }>;
}

/** The instructions of each stage of a Dockerfile: `FROM … AS name` starts one. */
function stages(dockerfile: string): { name: string; from: string; lines: string[] }[] {
  const logical = dockerfile.replace(/\\\n/g, " ").split("\n").map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#"));
  const result: { name: string; from: string; lines: string[] }[] = [];
  for (const line of logical) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
    if (from !== null) result.push({ name: from[2] ?? "", from: from[1] as string, lines: [] });
    else result.at(-1)?.lines.push(line);
  }
  return result;
}

describe("Dockerfile", () => {
  const all = stages(read("Dockerfile"));
  const build = all[0];
  const runtime = all.at(-1);

  it("builds in one stage (npm ci from the lockfile, then the build) and runs from a second, slim one", () => {
    expect(all.map((s) => s.name)).toEqual(["build", "runtime"]);
    expect(build?.lines.some((l) => /^RUN npm ci\b/.test(l))).toBe(true);
    expect(build?.lines.some((l) => /npm run build/.test(l) && /npm prune --omit=dev/.test(l))).toBe(true);
    expect(runtime?.from).toBe("${NODE_IMAGE}");
    expect(read("Dockerfile")).toMatch(/^ARG NODE_IMAGE=node:20-bookworm-slim$/m);
    // the runtime stage never installs or compiles: it copies what the build stage made
    expect(runtime?.lines.some((l) => /\bnpm (ci|install)\b|\btsc\b/.test(l))).toBe(false);
    expect(runtime?.lines.filter((l) => l.startsWith("COPY --from=build")).map((l) => l.split(/\s+/).at(-1))).toEqual(["./package.json", "./node_modules", "./dist"]);
  });

  it("copies the migrations before the build, which makes the migrated PGlite template and the CLI's bundle into dist/", () => {
    const lines = build?.lines ?? [];
    const buildAt = lines.findIndex((l) => /npm run build/.test(l));
    expect(lines.findIndex((l) => l === "COPY migrations ./migrations")).toBeGreaterThan(-1);
    expect(lines.findIndex((l) => l === "COPY migrations ./migrations")).toBeLessThan(buildAt);
    expect(lines.findIndex((l) => l === "COPY src ./src")).toBeLessThan(buildAt);
    const script = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts["build"] ?? "";
    expect(script).toContain("cli-bundle-build.js");
    expect(script).toContain("pglite-template-build.js");
  });

  it("runs as a non-root user, with `devmind serve` as the default command", () => {
    const lines = runtime?.lines ?? [];
    const user = lines.filter((l) => l.startsWith("USER "));
    expect(user).toEqual(["USER node"]);
    const userAt = lines.indexOf("USER node");
    expect(lines.findIndex((l) => l.startsWith("RUN "))).toBeLessThan(userAt);
    expect(lines.slice(userAt).some((l) => l.startsWith("RUN "))).toBe(false);
    expect(lines).toContain('ENTRYPOINT ["devmind"]');
    expect(lines.at(-1)).toBe('CMD ["serve"]');
  });

  it("gets only what the build needs from the checkout (.dockerignore keeps out .env, node_modules, dist)", () => {
    const ignored = read(".dockerignore").split("\n").map((l) => l.trim());
    for (const entry of [".env", "node_modules", "dist", ".git", ".devmind"]) expect(ignored).toContain(entry);
  });
});

describe("docker-compose.yml", () => {
  const compose = parse(read("docker-compose.yml")) as { services: Record<string, Service>; volumes: Record<string, unknown> };
  const devmind = compose.services["devmind"] as Service;
  const postgres = compose.services["postgres"] as Service;

  it("starts postgres and devmind built from the Dockerfile, serve once postgres is healthy", () => {
    expect(Object.keys(compose.services).sort()).toEqual(["devmind", "postgres"]);
    expect(postgres.image).toBe("postgres:16");
    expect(devmind.build).toBe(".");
    expect(devmind.command).toEqual(["serve"]);
    expect(devmind.depends_on).toEqual({ postgres: { condition: "service_healthy" } });
    expect(devmind.environment?.["DATABASE_URL"]).toMatch(/^postgres:\/\/devmind:\$\{POSTGRES_PASSWORD:-devmind\}@postgres:5432\/devmind$/);
  });

  it("never loops: a bounded restart policy, no npm at start, no bind mount of the checkout", () => {
    expect(devmind.restart).toMatch(/^on-failure:[1-5]$/);
    expect(JSON.stringify([devmind.command, devmind.entrypoint])).not.toMatch(/npm/);
    for (const service of [devmind, postgres]) {
      for (const volume of service.volumes ?? []) {
        const source = volume.split(":")[0] as string;
        expect(source, volume).toMatch(/^[a-z][a-z0-9_-]*$/);
        expect(Object.keys(compose.volumes)).toContain(source);
      }
    }
  });

  it("publishes only devmind, on loopback and an overridable port; postgres only through the documented extra file", () => {
    expect(postgres.ports).toBeUndefined();
    expect(devmind.ports).toEqual(["127.0.0.1:${DEVMIND_HOST_PORT:-8787}:8787"]);
    const extra = parse(read("docker-compose.postgres-port.yml")) as { services: Record<string, Service> };
    expect(extra.services["postgres"]?.ports).toEqual(["127.0.0.1:${POSTGRES_HOST_PORT:-5433}:5432"]);
  });

  it("takes keys from .env (optional file), never from the compose file", () => {
    expect(devmind.env_file).toEqual([{ path: ".env", required: false }]);
    const settings = read("docker-compose.yml").split("\n").filter((line) => !line.trim().startsWith("#")).join("\n");
    expect(settings).not.toMatch(/API_KEY|sk-/);
    expect(Object.keys(devmind.environment ?? {}).sort()).toEqual(["DATABASE_URL", "DEVMIND_DATA_DIR", "DEVMIND_HOST", "DEVMIND_PORT", "DEVMIND_WORKSPACE"]);
  });
});
