/**
 * The issue 37 measure: a chat model with `_generate` only (no native streaming), one
 * `append_file` call per turn, through devmind's agent on in-memory PGlite. Prints how many runs
 * succeeded and how many lines of the expected were written (every call must run).
 *
 *   node --import tsx bench/generate-only-agent.ts [RUNS=40] [CALLS_PER_RUN=3]
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { loadConfig } from "../src/config.js";
import { migrate } from "../src/db/migrate.js";
import { openDatabase } from "../src/db/open-database.js";
import { createRuntime } from "../src/runtime/runtime.js";

/** `_generate` only: `calls` append_file calls (one per turn), then "done". */
class GenerateOnly extends BaseChatModel {
  constructor(private readonly calls: number) {
    super({});
  }
  _llmType(): string {
    return "generate-only";
  }
  override bindTools(): never {
    return this as never;
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const since = messages.slice(messages.map((m) => m.getType()).lastIndexOf("human"));
    const done = since.filter((m) => m.getType() === "tool").length;
    const task = messages.filter((m) => m.getType() === "human").length;
    const message =
      done >= this.calls ? new AIMessage("done") : new AIMessage({ content: "", tool_calls: [{ id: `t${task}_${done}`, name: "append_file", args: { path: "log.txt", content: `run ${task} line ${done + 1}\n` } }] });
    return { generations: [{ message, text: "" }] };
  }
}

const runs = Number(process.argv[2] ?? 40);
const calls = Number(process.argv[3] ?? 3);
const workspace = mkdtempSync(join(tmpdir(), "devmind-genonly-"));
const db = await openDatabase({ dataDir: "memory://" });
await migrate(db);
const runtime = createRuntime({ db, model: new GenerateOnly(calls), config: loadConfig({ DEVMIND_WORKSPACE: workspace, DEVMIND_MAX_TOOL_CALLS: String(calls), DEVMIND_MAX_MODEL_ROUNDS: String(calls + 1) }) });
let succeeded = 0;
let toolCalls = 0;
for (let i = 0; i < runs; i += 1) {
  const created = await runtime.runs.create({ input: { messages: [`append ${calls} lines`] } });
  const run = await runtime.runs.execute(created.run_id);
  if (run.status === "success") succeeded += 1;
  toolCalls += run.tool_calls;
}
const log = join(workspace, "log.txt");
const lines = (existsSync(log) ? readFileSync(log, "utf8") : "").split("\n").filter((line) => line !== "").length;
process.stdout.write(`runs success: ${succeeded} of ${runs}; tool calls run: ${toolCalls} of ${runs * calls}; lines written: ${lines} of ${runs * calls}\n`);
await runtime.close();
await db.close();
rmSync(workspace, { recursive: true, force: true });
