import type { Runtime } from "../runtime/runtime.js";

/** What the thread's checkpoint holds about one tool call: the arguments the model sent and, once it ran or was refused, the result the model saw. */
export interface CallDetail {
  name: string;
  args: unknown;
  /** The ToolMessage content (the CONTRACT section 4 envelope as JSON text), once stored. */
  result?: string;
}

/**
 * Tool calls of a thread read from its checkpointed messages. Stored events name a call and its
 * outcome, but a refused call has no `tool.call.started` (so no arguments) and no event carries
 * a tool's result; the CLI takes both from the messages the model saw.
 */
export class CallDetails {
  private readonly byId = new Map<string, CallDetail>();
  private read = false;

  /** `once`: the run is over (show, events), so the first read is the last one needed. */
  constructor(
    private readonly runtime: Runtime,
    private readonly threadId: string,
    private readonly options: { once?: boolean } = {},
  ) {}

  /** The call's detail as of the last `refresh`. */
  get(toolCallId: string): CallDetail | undefined {
    return this.byId.get(toolCallId);
  }

  /** Re-reads the thread's messages; a failure to read leaves what is known (the display is best effort). */
  async refresh(): Promise<void> {
    if (this.read && this.options.once === true) return;
    this.read = true;
    let messages: unknown;
    try {
      messages = ((await this.runtime.threads.state(this.threadId)).values as { messages?: unknown }).messages;
    } catch {
      return;
    }
    if (!Array.isArray(messages)) return;
    for (const message of messages as Record<string, unknown>[]) {
      for (const call of Array.isArray(message["tool_calls"]) ? (message["tool_calls"] as Record<string, unknown>[]) : []) {
        if (typeof call["id"] !== "string") continue;
        const known = this.byId.get(call["id"]);
        this.byId.set(call["id"], { ...known, name: String(call["name"]), args: call["args"] });
      }
      const id = message["tool_call_id"];
      if (typeof id === "string") {
        const known = this.byId.get(id) ?? { name: String(message["name"] ?? ""), args: undefined };
        this.byId.set(id, { ...known, result: contentText(message["content"]) });
      }
    }
  }
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part === "string" ? part : typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : "")).join("");
  return JSON.stringify(content) ?? "";
}
