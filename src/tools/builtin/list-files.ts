import { lstat, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { TOOL_LIMITS } from "../../constants.js";
import { defineTool, type Tool } from "../define-tool.js";
import { ToolFailure } from "../tool-failure.js";
import { quote } from "../tool-result.js";
import { fsFailure, locateInWorkspace } from "../workspace.js";

/** One directory entry as `list_files` reports it; `size` is in bytes for files, else null. */
export interface FileEntry {
  name: string;
  type: "file" | "dir" | "symlink" | "other";
  size: number | null;
}

/**
 * `list_files {path = "."}` -> `{path, entries, total, truncated}`: the entries of a workspace
 * directory sorted by name, at most `TOOL_LIMITS.listFilesMaxEntries` of them and no more than fit
 * the call's output limit (`truncated` says whether more exist, `total` how many). Symlinks are
 * listed as such, not followed.
 * [none / no / idempotent]
 */
export function listFilesTool(workspace: string): Tool {
  return defineTool({
    name: "list_files",
    description: "List the files and directories in a workspace directory (non-recursive).",
    schema: z.object({
      path: z.string().min(1).default(".").describe("directory, relative to the workspace root"),
    }),
    sideEffect: "none",
    approval: false,
    idempotent: true,
    async execute({ path }, ctx) {
      const where = await locateInWorkspace(workspace, path);
      if (!where.exists) throw new ToolFailure("TOOL_FAILED", `no such directory: ${quote(where.relative)}`);
      try {
        if (!(await stat(where.absolute)).isDirectory()) {
          throw new ToolFailure("TOOL_FAILED", `${quote(where.relative)} is not a directory; use read_file to read a file`);
        }
        ctx.signal.throwIfAborted();
        const dirents = await readdir(where.absolute, { withFileTypes: true });
        dirents.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
        // stay under both the entry cap and the output limit, so the model gets structured data
        let budget = ctx.maxOutputChars - JSON.stringify({ path: where.relative, entries: [], total: dirents.length, truncated: true }).length;
        const entries: FileEntry[] = [];
        for (const dirent of dirents.slice(0, TOOL_LIMITS.listFilesMaxEntries)) {
          ctx.signal.throwIfAborted();
          const type = dirent.isSymbolicLink() ? "symlink" : dirent.isDirectory() ? "dir" : dirent.isFile() ? "file" : "other";
          const size = type === "file" ? await fileSize(join(where.absolute, dirent.name)) : null;
          const entry: FileEntry = { name: dirent.name, type, size };
          budget -= JSON.stringify(entry).length + 1;
          if (budget < 0) break;
          entries.push(entry);
        }
        return { path: where.relative, entries, total: dirents.length, truncated: dirents.length > entries.length };
      } catch (error) {
        throw fsFailure(error, where.relative);
      }
    },
  });
}

/** Size of a file that may vanish between readdir and lstat (then null). */
async function fileSize(path: string): Promise<number | null> {
  try {
    return (await lstat(path)).size;
  } catch {
    return null;
  }
}
