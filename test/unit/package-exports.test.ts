import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, { types: string; import: string }> };

/** The source file a built `dist/src/....js` (or `.d.ts`) path is compiled from. */
const sourceOf = (built: string): string => join(root, built.replace(/^\.\/dist\//, "").replace(/\.d\.ts$|\.js$/, ".ts"));

describe("the package's exports", () => {
  it("has the library API at '.' and the internals behind subpaths, each built from a source file with its types", () => {
    expect(Object.keys(pkg.exports).sort()).toEqual([".", "./internals", "./server"]);
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      expect(sourceOf(target.import), subpath).toBe(sourceOf(target.types));
      expect(existsSync(sourceOf(target.import)), `${subpath} -> ${target.import}`).toBe(true);
    }
  });

  it("keeps internals out of the main export and offers them under devmind/internals and devmind/server", async () => {
    const main = (await import(sourceOf(pkg.exports["."]!.import))) as Record<string, unknown>;
    const internals = (await import(sourceOf(pkg.exports["./internals"]!.import))) as Record<string, unknown>;
    const server = (await import(sourceOf(pkg.exports["./server"]!.import))) as Record<string, unknown>;
    for (const name of ["withSchema", "readMigrationFiles", "fenceConfigurable", "createApp"]) expect(main[name], name).toBeUndefined();
    for (const name of ["withSchema", "readMigrationFiles", "fenceConfigurable"]) expect(typeof internals[name], name).toBe("function");
    expect(typeof server["createApp"]).toBe("function");
    // CONTRACT section 9
    for (const name of ["loadConfig", "openDatabase", "migrate", "migrationStatus", "PostgresCheckpointSaver", "defineTool", "builtinTools", "createChatModel", "ScriptedChatModel", "buildAgentGraph", "createRuntime", "startServer", "PostgresStore", "ledgeredTool", "ledgeredToolNode", "runHandleOf"]) {
      expect(typeof main[name], name).toBe("function");
    }
  });
});
