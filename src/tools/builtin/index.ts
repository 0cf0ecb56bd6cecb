import type { AttachmentSink } from "../attachment-sink.js";
import type { Tool } from "../define-tool.js";
import { addTool, currentTimeTool, demoTextTool } from "./basic-tools.js";
import { genImageTool, type ImageSettings } from "./gen-image.js";
import { listFilesTool } from "./list-files.js";
import { readFileTool } from "./read-file.js";
import { runCommandTool } from "./run-command.js";
import { sendFileTool } from "./send-file.js";
import { appendFileTool, writeFileTool } from "./write-files.js";

export type { ImageSettings } from "./gen-image.js";

/** Options of `builtinTools`. */
export interface BuiltinToolsOptions {
  /** DEVMIND_WORKSPACE: the only directory the file and command tools may touch (created by `ensureWorkspace`). */
  workspace: string;
  /** Durable storage for attachments (the runtime's `AttachmentStore`); enables `send_file`. */
  attachments?: AttachmentSink | undefined;
  /** The config's `image` (DEVMIND_IMAGE_MODEL set); with `attachments`, enables `gen_image`. */
  image?: ImageSettings | null | undefined;
  /** Clock for `get_current_time`; injectable so tests get a fixed instant. */
  now?: () => Date;
}

/**
 * The built-in tools of CONTRACT section 4: `add`, `get_current_time`, `read_demo_text`,
 * `list_files`, `read_file`, `write_file`, `append_file`, `run_command`; `send_file` when an
 * attachment store is given; `gen_image` when one is given and an image model is configured.
 *
 * Why a factory: the file and command tools are bound to one workspace, the attachment tools to
 * one store, and every call gets fresh frozen tool objects, so nothing is shared between
 * runtimes. How: pass the result (plus your own tools) to `new ToolRegistry(...)`; every path
 * goes through `resolveInWorkspace`.
 */
export function builtinTools(options: BuiltinToolsOptions): Tool[] {
  const { workspace, attachments, image } = options;
  const tools = [
    addTool(),
    currentTimeTool(options.now),
    demoTextTool(),
    listFilesTool(workspace),
    readFileTool(workspace),
    writeFileTool(workspace),
    appendFileTool(workspace),
    runCommandTool(workspace),
  ];
  if (attachments !== undefined) tools.push(sendFileTool(workspace, attachments));
  if (attachments !== undefined && image !== undefined && image !== null) tools.push(genImageTool(image, attachments));
  return tools;
}
