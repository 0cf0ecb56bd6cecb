/**
 * Example (c): an agent built with LangChain's own `createAgent` and its human-in-the-loop
 * middleware. Its tools are plain LangChain tools: devmind puts the agent's tool node on the run's
 * ledger when it loads the graph, so each call is effectively-once across crashes; `lookup` says
 * it may run again (`metadata.idempotent`). `append_line` (not idempotent) needs approval; `lookup`
 * does not. The model comes from devmind's configuration (DEVMIND_MODEL, e.g. `openai:gpt-4o-mini`,
 * or OPENAI_API_KEY); with none configured, the scripted model plays this folder's `turns.json`, so
 * the example runs offline as shipped. Lines are appended to `$NOTES_FILE` (default ./notes.txt).
 */
import { appendFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { createAgent, humanInTheLoopMiddleware, tool, type ReactAgent } from "langchain";
import { z } from "zod";
import { createChatModel, loadConfig } from "devmind";

const notesFile = (): string => process.env["NOTES_FILE"] ?? "notes.txt";

/** The offline script beside this file: a lookup and a line to append (which waits for approval), then an answer. */
const TURNS = fileURLToPath(new URL("./turns.json", import.meta.url));

/** devmind's configured model, or the scripted one playing `turns.json` when none is configured. */
function model(): ReturnType<typeof createChatModel> {
  const config = loadConfig(process.env);
  return createChatModel(config.model === null ? loadConfig({ ...process.env, DEVMIND_MODEL: `scripted:${TURNS}` }) : config);
}

const appendLine = tool(
  async ({ line }: { line: string }) => {
    await appendFile(notesFile(), `${line}\n`);
    return `appended: ${line}`;
  },
  { name: "append_line", description: "Append one line to the notes file.", schema: z.object({ line: z.string() }) },
);

const lookup = tool(async ({ term }: { term: string }) => `${term}: ${term.length} letters`, {
  name: "lookup",
  description: "Look a term up.",
  schema: z.object({ term: z.string() }),
  metadata: { idempotent: true },
});

/** A factory: the model is built from the environment when the graph is first used. */
export const agent = (): ReactAgent =>
  createAgent({
    model: model(),
    tools: [appendLine, lookup],
    middleware: [humanInTheLoopMiddleware({ interruptOn: { append_line: { allowedDecisions: ["approve", "edit", "reject"] } } })],
  });
