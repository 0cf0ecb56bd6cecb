import { constants } from "node:fs";
import { mkdir, open, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";
import { TOOL_LIMITS } from "../../constants.js";
import { defineTool, type Tool } from "../define-tool.js";
import { ToolFailure } from "../tool-failure.js";
import { quote } from "../tool-result.js";
import { fsFailure, lexicalEscape, locateInWorkspace, type WorkspacePath } from "../workspace.js";

// O_NOFOLLOW: the path is already resolved, so a symlink here means it was swapped in since.
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;
const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | NO_FOLLOW;
const APPEND_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | NO_FOLLOW;

const fileArgs = z.object({
  path: z.string().min(1).describe("file, relative to the workspace root; parent directories are created"),
  content: z.string().max(TOOL_LIMITS.writeFileMaxChars).describe("UTF-8 text"),
});

/**
 * `write_file {path, content}` -> `{path, bytes}`: creates or replaces a workspace file, creating
 * parent directories inside the workspace. [local / approval required / idempotent]
 */
export function writeFileTool(workspace: string): Tool {
  return defineTool({
    name: "write_file",
    description: "Create or overwrite a text file in the workspace (parent directories are created).",
    schema: fileArgs,
    sideEffect: "local",
    approval: true,
    idempotent: true,
    // refused before a human is asked; symlinks are checked again when it runs
    deny: ({ path }) => lexicalEscape(workspace, path),
    async execute({ path, content }, ctx) {
      const where = await prepare(workspace, path);
      try {
        ctx.signal.throwIfAborted();
        const handle = await open(where.absolute, WRITE_FLAGS, 0o666);
        try {
          await handle.writeFile(content, { encoding: "utf8", signal: ctx.signal });
        } finally {
          await handle.close();
        }
      } catch (error) {
        throw fsFailure(error, where.relative);
      }
      return { path: where.relative, bytes: Buffer.byteLength(content, "utf8") };
    },
  });
}

/**
 * `append_file {path, content}` -> `{path, bytes, size}`: appends to a workspace file (created if
 * missing); `bytes` were appended, `size` is the file's size afterwards. Not idempotent: a retry
 * appends twice. [local / no approval / not idempotent]
 */
export function appendFileTool(workspace: string): Tool {
  return defineTool({
    name: "append_file",
    description: "Append text to a file in the workspace, creating it (and parent directories) if missing.",
    schema: fileArgs,
    sideEffect: "local",
    approval: false,
    idempotent: false,
    deny: ({ path }) => lexicalEscape(workspace, path),
    async execute({ path, content }, ctx) {
      const where = await prepare(workspace, path);
      let size: number;
      try {
        ctx.signal.throwIfAborted();
        const handle: FileHandle = await open(where.absolute, APPEND_FLAGS, 0o666);
        try {
          await handle.appendFile(content, { encoding: "utf8", signal: ctx.signal });
          size = (await handle.stat()).size;
        } finally {
          await handle.close();
        }
      } catch (error) {
        throw fsFailure(error, where.relative);
      }
      return { path: where.relative, bytes: Buffer.byteLength(content, "utf8"), size };
    },
  });
}

/** Resolves the target, refuses directories, and creates missing parents inside the workspace. */
async function prepare(workspace: string, path: string): Promise<WorkspacePath> {
  const where = await locateInWorkspace(workspace, path);
  if (where.relative === ".") throw new ToolFailure("TOOL_FAILED", "the workspace root is a directory, not a file");
  try {
    await mkdir(dirname(where.absolute), { recursive: true });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "EEXIST" || code === "ENOTDIR") throw new ToolFailure("TOOL_FAILED", `a parent of ${quote(where.relative)} is a file, not a directory`);
    throw fsFailure(error, where.relative);
  }
  return where;
}
