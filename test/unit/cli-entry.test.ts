import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEntryModule } from "../../src/cli/cli-entry.js";

describe("which module starts the CLI", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  function emptyDir(): string {
    const dir = mkdtempSync(join(tmpdir(), "devmind-entry-"));
    dirs.push(dir);
    return dir;
  }

  it("starts the one-file bundle when no project graph can load", () => {
    const cwd = emptyDir();
    for (const args of [["run", "a task"], ["runs", "--json"], ["serve", "--port", "0"], [], ["--version"], ["graphs"]]) {
      expect(cliEntryModule({ args, cwd, bundleExists: true, graphsBundleExists: true }), args.join(" ")).toBe("./cli-program.bundle.mjs");
    }
  });

  it("starts devmind's own modules bundled when ./langgraph.json exists, so graphs share the process's one LangGraph", () => {
    const cwd = emptyDir();
    writeFileSync(join(cwd, "langgraph.json"), "{}");
    expect(cliEntryModule({ args: ["show", "ID"], cwd, bundleExists: true, graphsBundleExists: true })).toBe("./cli-program.graphs.mjs");
    // without that bundle (a tsc-only build), the separate modules
    expect(cliEntryModule({ args: ["show", "ID"], cwd, bundleExists: true, graphsBundleExists: false })).toBe("./cli-program.js");
  });

  it("starts devmind's own modules bundled for any --config argument, in either spelling, even one that is a task text", () => {
    const cwd = emptyDir();
    for (const args of [["serve", "--config", "x.json"], ["run", "--config=x.json", "task"], ["graphs", "--config"], ["run", "--config"]]) {
      expect(cliEntryModule({ args, cwd, bundleExists: true, graphsBundleExists: true }), args.join(" ")).toBe("./cli-program.graphs.mjs");
      expect(cliEntryModule({ args, cwd, bundleExists: false, graphsBundleExists: false }), args.join(" ")).toBe("./cli-program.js");
    }
    // a task that only mentions the flag inside its text is not the flag
    expect(cliEntryModule({ args: ["run", "explain --config"], cwd, bundleExists: true, graphsBundleExists: true })).toBe("./cli-program.bundle.mjs");
  });

  it("starts the one-file bundle in a project for the commands that never load graphs", () => {
    const cwd = emptyDir();
    writeFileSync(join(cwd, "langgraph.json"), "{}");
    for (const args of [["runs", "--json"], ["events", "ID"], ["cancel", "ID"], ["migrate"], ["dockerfile", "--config", "x.json"], ["build", "-t", "x"]]) {
      expect(cliEntryModule({ args, cwd, bundleExists: true, graphsBundleExists: true }), args.join(" ")).toBe("./cli-program.bundle.mjs");
    }
    // a command that may load them, and no command (help), keep the graphs bundle there
    for (const args of [["show", "ID"], ["graphs"], ["crons", "list"], ["--help"]]) {
      expect(cliEntryModule({ args, cwd, bundleExists: true, graphsBundleExists: true }), args.join(" ")).toBe("./cli-program.graphs.mjs");
    }
  });

  it("starts the separate modules without a bundle (a tsc-only build)", () => {
    expect(cliEntryModule({ args: ["runs"], cwd: emptyDir(), bundleExists: false, graphsBundleExists: false })).toBe("./cli-program.js");
  });
});
