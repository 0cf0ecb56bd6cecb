import type { ToolCallChunk } from "@langchain/core/messages";

/** What of a model's chunk (or, for a model without native streaming, its whole message) carries tool calls. */
export interface ToolCallSource {
  tool_call_chunks?: readonly ToolCallChunk[] | undefined;
  tool_calls?: readonly { id?: string | undefined; name: string; args?: unknown }[] | undefined;
  invalid_tool_calls?: readonly { id?: string | undefined; name?: string | undefined; args?: string | undefined }[] | undefined;
}

/**
 * The tool calls of one streamed answer as `tool_call_chunks`, whatever form each chunk gives
 * them in, so that concatenating the chunks (LangChain's `concat`, which keeps whole `tool_calls`
 * only while no chunk has `tool_call_chunks`) and LangGraph's `messages` stream mode lose none:
 * - streamed deltas (`tool_call_chunks`, e.g. ChatOpenAI) are kept as they came;
 * - whole calls (`tool_calls`: a model without native streaming, whose one chunk is its
 *   `_generate` message, or a model that streams whole calls) become one chunk each, arguments
 *   as JSON text;
 * - calls whose arguments did not parse (`invalid_tool_calls`) become one chunk each with the
 *   raw text, so they stay unparsable and reach the agent as INVALID_ARGUMENTS.
 * A call without an id gets a stable one (`call_<prefix>_<n>`, n counted in the answer), since
 * LangChain turns an id-less call into an invalid one and a tool message must name its call: a
 * delta gets it on the first chunk of its `index` (the later ones join it by index).
 * One instance per answer.
 */
export class ToolCallChunker {
  private readonly started = new Set<number>();
  private generated = 0;

  /** @param idPrefix What generated ids start with after `call_` (e.g. from the answer's stored id). */
  constructor(private readonly idPrefix: string) {}

  /** The chunk's tool calls as chunks (empty when it has none). */
  chunksOf(source: ToolCallSource): ToolCallChunk[] {
    const deltas = source.tool_call_chunks ?? [];
    if (deltas.length > 0) return deltas.map((delta) => this.delta(delta));
    return [
      ...(source.tool_calls ?? []).map((call) => ({ type: "tool_call_chunk" as const, id: call.id ?? this.nextId(), name: call.name, args: JSON.stringify(call.args ?? {}) })),
      ...(source.invalid_tool_calls ?? []).map((call) => ({
        type: "tool_call_chunk" as const,
        id: call.id ?? this.nextId(),
        ...(call.name === undefined ? {} : { name: call.name }),
        args: typeof call.args === "string" ? call.args : "",
      })),
    ];
  }

  private delta(delta: ToolCallChunk): ToolCallChunk {
    const index = delta.index;
    if (index === undefined) return delta.id === undefined ? { ...delta, id: this.nextId() } : delta;
    const first = !this.started.has(index);
    this.started.add(index);
    return first && delta.id === undefined ? { ...delta, id: this.nextId() } : delta;
  }

  private nextId(): string {
    const id = `call_${this.idPrefix}_${this.generated}`;
    this.generated += 1;
    return id;
  }
}

/** The prefix of generated call ids for an answer stored under `messageId` (hex, short, stable). */
export function callIdPrefix(messageId: string): string {
  return messageId.replace(/[^A-Za-z0-9]/g, "").slice(0, 16);
}
