import type { ScriptedTurn } from "../model/scripted-turns.js";

/** The task the demo gives the agent. */
export const DEMO_TASK = "Read the demo text, count its paragraphs, and save a three-line summary to summary.md in the workspace.";

/** The file the demo's agent writes (after approval), relative to the workspace. */
export const DEMO_OUTPUT_FILE = "summary.md";

const SUMMARY = [
  "# devmind in three lines",
  "",
  "- Every step of an agent run is checkpointed in PostgreSQL (or embedded PGlite), so a run outlives its process.",
  "- Tools are validated, time-limited, confined to the workspace, and the risky ones wait for a human's approval.",
  "- Finished tool calls are recorded and never run twice; every run stops for a stated reason.",
  "",
].join("\n");

/**
 * The demo's scripted model (CONTRACT section 7 format): what a real model might answer, fixed
 * so the demo needs no key and no network. Tool calls first (read_demo_text, list_files, add),
 * then write_file, which needs approval, then the final answer. The small delays let the
 * spinner be seen; the whole demo stays well under a minute.
 */
export const DEMO_TURNS: ScriptedTurn[] = [
  {
    content: "Let me read the text and look at the workspace first.",
    tool_calls: [
      { id: "call_read", name: "read_demo_text", args: {} },
      { id: "call_list", name: "list_files", args: {} },
    ],
    delay_ms: 600,
  },
  {
    content: "The text has a first paragraph, then two more: 1 + 2.",
    tool_calls: [{ id: "call_add", name: "add", args: { a: 1, b: 2 } }],
    delay_ms: 500,
  },
  {
    content: "Three paragraphs. Writing the summary now; writing a file needs your approval.",
    tool_calls: [{ id: "call_write", name: "write_file", args: { path: DEMO_OUTPUT_FILE, content: SUMMARY } }],
    delay_ms: 500,
  },
  {
    content:
      "Done. The demo text has 3 paragraphs; I saved a three-line summary to summary.md " +
      "(the write ran only after it was approved, in a fresh process that picked the run up from its last checkpoint).",
    delay_ms: 400,
  },
];
