import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The packages whose classes cross between a project's graphs and devmind: one copy of each must serve both. */
export const SHARED_PACKAGES = ["@langchain/langgraph", "@langchain/core"] as const;

/** One installed copy of a package: its folder (real path) and version. */
export interface PackageLocation {
  dir: string;
  version: string;
}

/** A package the project resolves to another copy than devmind's. */
export interface SecondCopy {
  name: string;
  devmind: PackageLocation;
  project: PackageLocation;
  /** The project file (or folder) whose imports resolve to the project's copy. */
  from: string;
}

/**
 * The folder `name` resolves to from `start` by Node's package lookup (`node_modules/<name>` in
 * `start` and each folder above it), as its real path, with its version; null when none is found.
 */
export function resolvePackage(name: string, start: string): PackageLocation | null {
  let dir = start;
  for (;;) {
    const candidate = join(dir, "node_modules", ...name.split("/"));
    const manifest = join(candidate, "package.json");
    if (existsSync(manifest)) {
      let version = "unknown";
      try {
        const parsed = JSON.parse(readFileSync(manifest, "utf8")) as { version?: unknown };
        if (typeof parsed.version === "string") version = parsed.version;
      } catch {
        // an unreadable manifest still names the folder
      }
      return { dir: realpathSync(candidate), version };
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/**
 * The shared packages (SHARED_PACKAGES) that a project's files resolve to another installed copy
 * than devmind's own: two copies of LangGraph or LangChain core in one process do not know each
 * other's classes (an `interrupt()`, a `Command` or a message of one fails the other's checks),
 * and load twice. `files` are the project's graph files and its config folder; a package a file
 * does not resolve at all is no second copy. At most one finding per package.
 */
export function secondCopies(files: readonly string[], devmindDir: string = dirname(fileURLToPath(import.meta.url))): SecondCopy[] {
  const found: SecondCopy[] = [];
  for (const name of SHARED_PACKAGES) {
    const ours = resolvePackage(name, devmindDir);
    if (ours === null) continue;
    for (const file of files) {
      const start = isDirectory(file) ? file : dirname(file);
      const theirs = resolvePackage(name, start);
      if (theirs !== null && theirs.dir !== ours.dir) {
        found.push({ name, devmind: ours, project: theirs, from: file });
        break;
      }
    }
  }
  return found;
}

/** The warning for a second copy: both paths and versions, and what to do. */
export function secondCopyWarning(copy: SecondCopy): string {
  return (
    `the project loads a second copy of ${copy.name} (${copy.project.version} in ${copy.project.dir}, resolved from ${copy.from}) ` +
    `beside devmind's (${copy.devmind.version} in ${copy.devmind.dir}): values of one copy (interrupts, Command, messages) fail the other's checks. ` +
    `Depend on the version devmind uses (npm install --save-exact ${copy.name}@${copy.devmind.version}) or remove the project's own, then run npm dedupe`
  );
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
