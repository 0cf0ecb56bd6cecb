import { constants } from "node:fs";
import { open, stat, type FileHandle } from "node:fs/promises";
import { z } from "zod";
import { TOOL_LIMITS } from "../../constants.js";
import { defineTool, type Tool } from "../define-tool.js";
import { ToolFailure } from "../tool-failure.js";
import { cutWithMarker, quote } from "../tool-result.js";
import { fsFailure, locateInWorkspace } from "../workspace.js";

// O_NOFOLLOW: the path is already resolved, so a symlink here means it was swapped in since.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * `read_file {path, offset = 0, limit = 400}` -> `{path, offset, lines, total_lines, content}`:
 * up to `limit` lines of a UTF-8 text file starting at 0-based line `offset`, joined with `\n`;
 * fewer when more would not fit the call's output limit (page on with `offset + lines`; a single
 * line too long to fit is cut with a `…[truncated N chars]` marker).
 * Directories, non-regular files, binary files and files over `TOOL_LIMITS.readFileMaxBytes` are
 * refused with a message saying so. [none / no / idempotent]
 */
export function readFileTool(workspace: string): Tool {
  return defineTool({
    name: "read_file",
    description: "Read lines of a text file in the workspace. Use offset and limit to page through long files.",
    schema: z.object({
      path: z.string().min(1).describe("file, relative to the workspace root"),
      offset: z.number().int().min(0).default(0).describe("0-based index of the first line to return"),
      limit: z.number().int().min(1).max(TOOL_LIMITS.readFileMaxLines).default(TOOL_LIMITS.readFileDefaultLines).describe("how many lines to return"),
    }),
    sideEffect: "none",
    approval: false,
    idempotent: true,
    async execute({ path, offset, limit }, ctx) {
      const where = await locateInWorkspace(workspace, path);
      const shown = quote(where.relative);
      if (!where.exists) throw new ToolFailure("TOOL_FAILED", `no such file: ${shown}`);
      let text: string;
      try {
        assertReadable(await stat(where.absolute), shown);
        const handle: FileHandle = await open(where.absolute, READ_FLAGS);
        try {
          assertReadable(await handle.stat(), shown);
          text = await handle.readFile({ encoding: "utf8", signal: ctx.signal });
        } finally {
          await handle.close();
        }
      } catch (error) {
        throw fsFailure(error, where.relative);
      }
      if (text.includes("\0")) throw new ToolFailure("TOOL_FAILED", `${shown} looks like a binary file; read_file reads text only`);
      const all = text === "" ? [] : text.split(/\r?\n/);
      if (text.endsWith("\n")) all.pop();
      const base = JSON.stringify({ path: where.relative, offset, lines: limit, total_lines: all.length, content: "" }).length;
      const content = fitLines(all.slice(offset, offset + limit), ctx.maxOutputChars - base);
      return { path: where.relative, offset, lines: content.lines, total_lines: all.length, content: content.text };
    },
  });
}

function assertReadable(stats: { isDirectory(): boolean; isFile(): boolean; size: number }, shown: string): void {
  if (stats.isDirectory()) throw new ToolFailure("TOOL_FAILED", `${shown} is a directory; use list_files to see its entries`);
  if (!stats.isFile()) throw new ToolFailure("TOOL_FAILED", `${shown} is not a regular file`);
  if (stats.size > TOOL_LIMITS.readFileMaxBytes) {
    throw new ToolFailure("TOOL_FAILED", `${shown} is ${stats.size} bytes; read_file reads files of at most ${TOOL_LIMITS.readFileMaxBytes} bytes`);
  }
}

/** As many whole lines as fit `budget` characters of JSON (at least one, cut if it alone is too long). */
function fitLines(lines: string[], budget: number): { lines: number; text: string } {
  let used = 0;
  let count = 0;
  for (const line of lines) {
    used += JSON.stringify(line).length - 2 + (count > 0 ? 2 : 0); // "\n" separators are 2 chars in JSON
    if (used > budget) break;
    count += 1;
  }
  if (count === 0 && lines.length > 0) return { lines: 1, text: cutWithMarker(lines[0] as string, Math.max(1, budget)) };
  return { lines: count, text: lines.slice(0, count).join("\n") };
}
