import { constants } from "node:fs";
import { open, stat, type FileHandle } from "node:fs/promises";
import { basename } from "node:path";
import { z } from "zod";
import { ATTACHMENT_LIMITS } from "../../constants.js";
import { attachmentSummary, type AttachmentSink } from "../attachment-sink.js";
import { defineTool, type Tool } from "../define-tool.js";
import { mimeTypeFor } from "../mime-types.js";
import { ToolFailure } from "../tool-failure.js";
import { cutWithMarker, quote } from "../tool-result.js";
import { fsFailure, lexicalEscape, locateInWorkspace } from "../workspace.js";

// O_NOFOLLOW: the path is already resolved, so a symlink here means it was swapped in since.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * `send_file {path}` -> `{id, name, mime_type, size, url}`: stores a workspace file as an
 * attachment the user can download from `url` (`/files/{id}`). [none / no approval / idempotent]
 *
 * Why it exists: the model's answer is text; a file it made (a report, a chart) reaches the user
 * through this. The bytes are copied into durable storage at the time of the call, so the link
 * keeps working when the workspace changes, and re-running the same call (same run and
 * tool_call_id, e.g. after a crash) returns the same attachment. Files over
 * `ATTACHMENT_LIMITS.maxBytes` and anything but regular files are refused; the path is confined
 * to the workspace like every file tool.
 */
export function sendFileTool(workspace: string, attachments: AttachmentSink): Tool {
  return defineTool({
    name: "send_file",
    description: "Send a workspace file to the user as a downloadable attachment; returns its id and url.",
    schema: z.object({ path: z.string().min(1).describe("file, relative to the workspace root") }),
    sideEffect: "none",
    approval: false,
    idempotent: true,
    deny: ({ path }) => lexicalEscape(workspace, path),
    async execute({ path }, ctx) {
      const where = await locateInWorkspace(workspace, path);
      const shown = quote(where.relative);
      if (!where.exists) throw new ToolFailure("TOOL_FAILED", `no such file: ${shown}`);
      let bytes: Buffer;
      try {
        assertSendable(await stat(where.absolute), shown);
        const handle: FileHandle = await open(where.absolute, READ_FLAGS);
        try {
          assertSendable(await handle.stat(), shown);
          bytes = await handle.readFile({ signal: ctx.signal });
        } finally {
          await handle.close();
        }
      } catch (error) {
        throw fsFailure(error, where.relative);
      }
      // the file may have grown between the stat and the read
      assertSendable({ isDirectory: () => false, isFile: () => true, size: bytes.length }, shown);
      ctx.signal.throwIfAborted();
      const name = cutWithMarker(basename(where.absolute), ATTACHMENT_LIMITS.nameMaxChars);
      const info = await attachments.put({ runId: ctx.runId, threadId: ctx.threadId, toolCallId: ctx.toolCallId, name, mimeType: mimeTypeFor(name), bytes });
      return attachmentSummary(info);
    },
  });
}

function assertSendable(stats: { isDirectory(): boolean; isFile(): boolean; size: number }, shown: string): void {
  if (stats.isDirectory()) throw new ToolFailure("TOOL_FAILED", `${shown} is a directory; send_file sends one file`);
  if (!stats.isFile()) throw new ToolFailure("TOOL_FAILED", `${shown} is not a regular file`);
  if (stats.size > ATTACHMENT_LIMITS.maxBytes) {
    throw new ToolFailure("TOOL_FAILED", `${shown} is ${stats.size} bytes; send_file sends files of at most ${ATTACHMENT_LIMITS.maxBytes} bytes (10 MiB)`);
  }
}
