/**
 * Example (c): an agent built with LangChain's own `createAgent` and its human-in-the-loop
 * middleware. Its tools are plain LangChain tools: devmind puts the agent's tool node on the run's
 * ledger when it loads the graph, so each call is effectively-once across crashes; `lookup` says
 * it may run again (`metadata.idempotent`). `append_line` (not idempotent) needs approval; `lookup`
 * does not. The model comes from devmind's configuration (DEVMIND_MODEL, e.g. `openai:gpt-4o-mini`
 * or `scripted:turns.json` offline). Lines are appended to `$NOTES_FILE` (default ./notes.txt).
 */
import { appendFile } from "node:fs/promises";
import { createAgent, humanInTheLoopMiddleware, tool, type ReactAgent } from "langchain";
import { z } from "zod";
import { createChatModel, loadConfig } from "devmind";

const notesFile = (): string => process.env["NOTES_FILE"] ?? "notes.txt";

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
    model: createChatModel(loadConfig(process.env)),
    tools: [appendLine, lookup],
    middleware: [humanInTheLoopMiddleware({ interruptOn: { append_line: { allowedDecisions: ["approve", "edit", "reject"] } } })],
  });
