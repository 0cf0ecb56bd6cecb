/**
 * Second copies of the packages a project's graphs share with devmind: a folder whose
 * node_modules holds its own @langchain/langgraph or @langchain/core is found, with both folders
 * and versions; a folder resolving devmind's own copies, or none at all, is not.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { resolvePackage, secondCopies, secondCopyWarning } from "../../src/graphs/package-copies.js";
import { REPO_ROOT } from "../setup/build-outputs.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function project(packages: Record<string, string>): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "devmind-copies-")));
  dirs.push(dir);
  for (const [name, version] of Object.entries(packages)) {
    mkdirSync(join(dir, "node_modules", ...name.split("/")), { recursive: true });
    writeFileSync(join(dir, "node_modules", ...name.split("/"), "package.json"), JSON.stringify({ name, version }));
  }
  writeFileSync(join(dir, "graph.ts"), "export const graph = null;\n");
  return dir;
}

describe("second copies of LangGraph and LangChain core", () => {
  it("finds a project's own copy of each, from its graph file, naming both folders and versions", () => {
    const dir = project({ "@langchain/langgraph": "0.9.0", "@langchain/core": "0.3.1" });
    const ours = resolvePackage("@langchain/langgraph", REPO_ROOT);
    const copies = secondCopies([join(dir, "graph.ts")]);
    expect(copies.map((copy) => [copy.name, copy.project.version, copy.project.dir])).toEqual([
      ["@langchain/langgraph", "0.9.0", join(dir, "node_modules", "@langchain", "langgraph")],
      ["@langchain/core", "0.3.1", join(dir, "node_modules", "@langchain", "core")],
    ]);
    expect(copies[0]?.devmind).toEqual(ours);
    const warning = secondCopyWarning(copies[0] as (typeof copies)[number]);
    expect(warning).toContain(`second copy of @langchain/langgraph (0.9.0 in ${join(dir, "node_modules", "@langchain", "langgraph")}, resolved from ${join(dir, "graph.ts")})`);
    expect(warning).toContain(`beside devmind's (${ours?.version} in ${ours?.dir})`);
    expect(warning).toContain(`npm install --save-exact @langchain/langgraph@${ours?.version}`);
  });

  it("finds nothing for files that resolve devmind's copies (the examples) or no copy at all", () => {
    expect(secondCopies([join(REPO_ROOT, "examples", "approval-graph"), join(REPO_ROOT, "examples", "approval-graph", "graph.ts")])).toEqual([]);
    // a folder with no node_modules above it resolves nothing: no finding (the graph would fail to load on its own)
    expect(resolvePackage("@langchain/langgraph", "/")).toBeNull();
    const bare = project({});
    expect(secondCopies([bare]).map((copy) => copy.name)).toEqual([]);
  });
});
