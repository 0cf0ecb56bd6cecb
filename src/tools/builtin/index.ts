import type { Tool } from "../define-tool.js";
import { addTool, currentTimeTool, demoTextTool } from "./basic-tools.js";
import { listFilesTool } from "./list-files.js";
import { readFileTool } from "./read-file.js";
import { appendFileTool, writeFileTool } from "./write-files.js";

/** Options of `builtinTools`. */
export interface BuiltinToolsOptions {
  /** DEVMIND_WORKSPACE: the only directory the file tools may touch (created by `ensureWorkspace`). */
  workspace: string;
  /** Clock for `get_current_time`; injectable so tests get a fixed instant. */
  now?: () => Date;
}

/**
 * The built-in tools of CONTRACT section 4 that need no extra services: `add`,
 * `get_current_time`, `read_demo_text`, `list_files`, `read_file`, `write_file`, `append_file`.
 *
 * Why a factory: the file tools are bound to one workspace, and every call gets fresh frozen tool
 * objects, so nothing is shared between runtimes. How: pass the result (plus your own tools) to
 * `new ToolRegistry(...)`; every file operation goes through `resolveInWorkspace`.
 */
export function builtinTools(options: BuiltinToolsOptions): Tool[] {
  const { workspace } = options;
  return [
    addTool(),
    currentTimeTool(options.now),
    demoTextTool(),
    listFilesTool(workspace),
    readFileTool(workspace),
    writeFileTool(workspace),
    appendFileTool(workspace),
  ];
}
