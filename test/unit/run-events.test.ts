import { describe, expect, expectTypeOf, it } from "vitest";
import type { Usage } from "../../src/graph/state.js";
import type { ForeignRunEvent, NewRunEvent, RunEvent, StoredRunEvent } from "../../src/runtime/events/event-store.js";
import {
  RUN_EVENT_TYPES,
  STORED_RUN_EVENT_TYPES,
  isKnownRunEvent,
  isRunEventType,
  isStoredRunEventType,
  type RunEventData,
  type RunEventFields,
  type RunEventType,
  type StoredRunEventType,
} from "../../src/runtime/events/run-events.js";
import type { LiveEvent } from "../../src/runtime/runtime.js";
import { REAPED_RUN_EVENTS } from "../../src/runtime/queue/run-store.js";
import { finalEvent } from "../../src/runtime/queue/status.js";
import type { KnownTimelineEvent, TimelineEvent } from "../../src/cli/timeline.js";

/** CONTRACT section 6's stored events and the fields it names for each (an event may carry more). */
const CONTRACT_SECTION_6: Record<string, readonly string[]> = {
  "run.created": [],
  "run.started": ["attempt", "worker"],
  "run.resumed": ["reason"],
  "model.started": ["round"],
  "model.finished": ["round", "duration_ms", "tool_calls", "usage", "finish_reason"],
  "model.failed": ["round", "code", "message"],
  "tool.call.started": ["tool_call_id", "tool", "args"],
  "tool.call.finished": ["tool_call_id", "tool", "ok", "error_code", "duration_ms", "truncated"],
  "approval.requested": ["requests"],
  "approval.decided": ["tool_call_id", "decision", "by", "reason"],
  "run.interrupted": [],
  "run.cancel_requested": [],
  "run.succeeded": ["answer"],
  "run.failed": ["stop_reason", "code", "message"],
  "run.timeout": [],
  "run.cancelled": [],
};

/**
 * CONTRACT section 10's events of any graph: node started/finished, custom writes, resumes, and
 * the lifecycle of a graph's LangChain tools (what the `tools` stream mode sends), and the
 * LangChain stream events a run created with the `events` stream mode records (with the marker
 * of its cap).
 */
const CONTRACT_SECTION_10 = ["node.started", "node.finished", "message.started", "custom", "tools", "events", "events.truncated", "resume.given"];

/** Delivered live, never stored (CONTRACT section 6: model.delta; graph.stopped is the agent graph's end marker). */
const LIVE_ONLY = ["model.delta", "graph.stopped"];

describe("run event union", () => {
  it("has every type CONTRACT sections 6 and 10 name, stored, and nothing else but the live-only ones", () => {
    const contract = [...Object.keys(CONTRACT_SECTION_6), ...CONTRACT_SECTION_10];
    expect([...STORED_RUN_EVENT_TYPES].sort()).toEqual([...contract].sort());
    expect([...RUN_EVENT_TYPES].sort()).toEqual([...contract, ...LIVE_ONLY].sort());
    for (const type of contract) {
      expect(isRunEventType(type)).toBe(true);
      expect(isStoredRunEventType(type)).toBe(true);
    }
    for (const type of LIVE_ONLY) {
      expect(isRunEventType(type)).toBe(true);
      expect(isStoredRunEventType(type)).toBe(false);
    }
    for (const type of ["run.someday", "", "RUN.CREATED", "toString", "__proto__"]) expect(isRunEventType(type)).toBe(false);
    // dotted lower-case names, as the HTTP event stream names its SSE events
    for (const type of RUN_EVENT_TYPES) expect(type).toMatch(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/);
  });

  it("types every event with CONTRACT section 6's fields (checked by tsc)", () => {
    expectTypeOf<RunEventType>().toEqualTypeOf<StoredRunEventType | "model.delta" | "graph.stopped">();
    expectTypeOf<StoredRunEventType>().toEqualTypeOf<
      | "run.created"
      | "run.started"
      | "run.resumed"
      | "model.started"
      | "model.finished"
      | "model.failed"
      | "tool.call.started"
      | "tool.call.finished"
      | "approval.requested"
      | "approval.decided"
      | "run.interrupted"
      | "run.cancel_requested"
      | "run.succeeded"
      | "run.failed"
      | "run.timeout"
      | "run.cancelled"
      | "node.started"
      | "node.finished"
      | "message.started"
      | "custom"
      | "tools"
      | "events"
      | "events.truncated"
      | "resume.given"
    >();
    expectTypeOf<RunEventFields<"run.created">>().toEqualTypeOf<{ cron_id?: string }>();
    expectTypeOf<RunEventFields<"run.started">>().toEqualTypeOf<{ attempt: number; worker: string }>();
    expectTypeOf<keyof RunEventFields<"run.resumed">>().toEqualTypeOf<"reason" | "attempt" | "worker">();
    expectTypeOf<RunEventFields<"model.started">>().toEqualTypeOf<{ round: number }>();
    expectTypeOf<RunEventFields<"model.delta">>().toEqualTypeOf<{ round: number; text: string; message_id: string; offset: number }>();
    expectTypeOf<RunEventFields<"model.finished">>().toEqualTypeOf<{ round: number; duration_ms: number; tool_calls: number; usage: Usage; finish_reason: string | null }>();
    expectTypeOf<keyof RunEventFields<"model.failed">>().toEqualTypeOf<"round" | "code" | "message" | "attempt" | "will_retry">();
    expectTypeOf<RunEventFields<"tool.call.started">>().toEqualTypeOf<{ tool_call_id: string; tool: string; args: unknown }>();
    expectTypeOf<RunEventFields<"tool.call.finished">>().toEqualTypeOf<{ tool_call_id: string; tool: string; ok: boolean; error_code: string | null; duration_ms: number; truncated: boolean }>();
    expectTypeOf<RunEventFields<"approval.requested">>().toEqualTypeOf<{ requests: unknown[] }>();
    expectTypeOf<RunEventFields<"approval.decided">>().toEqualTypeOf<{ tool_call_id: string; decision: "approve" | "edit" | "reject"; by: string; reason: string | null }>();
    expectTypeOf<keyof RunEventFields<"run.interrupted">>().toEqualTypeOf<"interrupts">();
    expectTypeOf<keyof RunEventFields<"run.cancel_requested">>().toEqualTypeOf<never>();
    expectTypeOf<RunEventFields<"run.succeeded">>().toEqualTypeOf<{ answer: string | null }>();
    expectTypeOf<keyof RunEventFields<"run.failed">>().toEqualTypeOf<"stop_reason" | "code" | "message">();
    expectTypeOf<keyof RunEventFields<"run.timeout">>().toEqualTypeOf<never>();
    expectTypeOf<keyof RunEventFields<"run.cancelled">>().toEqualTypeOf<never>();
    expectTypeOf<keyof RunEventFields<"node.started">>().toEqualTypeOf<"node" | "task_id" | "ns">();
    expectTypeOf<keyof RunEventFields<"node.finished">>().toEqualTypeOf<"node" | "task_id" | "ns" | "duration_ms" | "error" | "interrupted">();
    expectTypeOf<RunEventFields<"message.started">>().toEqualTypeOf<{ ns: string[]; checkpoint_ns: string; message_id: string }>();
    expectTypeOf<keyof RunEventFields<"custom">>().toEqualTypeOf<"ns" | "data">();
    expectTypeOf<RunEventFields<"events">>().toEqualTypeOf<{ data: unknown }>();
    expectTypeOf<RunEventFields<"events.truncated">>().toEqualTypeOf<{ limit: number }>();
    expectTypeOf<keyof RunEventFields<"resume.given">>().toEqualTypeOf<"interrupt_ids" | "by" | "reason" | "value_digest">();
  });

  it("writes only stored types, reads known types narrowed and foreign ones apart, delivers the whole union live (checked by tsc)", () => {
    expectTypeOf<NewRunEvent["type"]>().toEqualTypeOf<StoredRunEventType>();
    expectTypeOf<{ type: "model.delta"; round: number; text: string; message_id: string; offset: number }>().not.toMatchTypeOf<NewRunEvent>();
    expectTypeOf<{ type: "run.started" }>().not.toMatchTypeOf<NewRunEvent>();
    expectTypeOf<{ type: "run.someday" }>().not.toMatchTypeOf<NewRunEvent>();
    expectTypeOf<LiveEvent>().toEqualTypeOf<RunEventData>();
    expectTypeOf<RunEvent["type"]>().toEqualTypeOf<RunEventType>();
    expectTypeOf<StoredRunEvent>().toEqualTypeOf<RunEvent | ForeignRunEvent>();
    expectTypeOf<Extract<RunEvent, { type: "run.started" }>["attempt"]>().toEqualTypeOf<number>();
    expectTypeOf<RunEvent>().toMatchTypeOf<TimelineEvent>();
    expectTypeOf<LiveEvent>().toMatchTypeOf<KnownTimelineEvent>();
  });

  it("tells foreign events (a newer version's types) from known ones", () => {
    const envelope = { run_id: "r", thread_id: "t", seq: 1, at: "2026-01-01T00:00:00.000Z" };
    const known: StoredRunEvent = { ...envelope, type: "run.started", attempt: 1, worker: "w" };
    const foreign: StoredRunEvent = { ...envelope, type: "run.paused_for_review", by: "alice" };
    expect(isKnownRunEvent(known)).toBe(true);
    expect(isKnownRunEvent(foreign)).toBe(false);
    if (isKnownRunEvent(known) && known.type === "run.started") expectTypeOf(known.attempt).toEqualTypeOf<number>();
  });

  it("builds the final events and the reaper's events as members of the stored union", () => {
    const error = { code: "MODEL_FAILED", message: "boom" };
    expect(finalEvent("success", "completed", "42", null)).toEqual({ type: "run.succeeded", answer: "42" });
    expect(finalEvent("error", "model_failed", null, error)).toEqual({ type: "run.failed", stop_reason: "model_failed", code: "MODEL_FAILED", message: "boom" });
    expect(finalEvent("error", "internal_error", null, null)).toEqual({ type: "run.failed", stop_reason: "internal_error", code: null, message: null });
    expect(finalEvent("timeout", "deadline", null, null)).toEqual({ type: "run.timeout" });
    expect(finalEvent("interrupted", "cancelled", null, null)).toEqual({ type: "run.cancelled" });
    expect(REAPED_RUN_EVENTS).toEqual({
      cancelled: { type: "run.cancelled" },
      failed: { type: "run.failed", stop_reason: "max_attempts", code: "MAX_ATTEMPTS", message: null },
    });
    for (const event of Object.values(REAPED_RUN_EVENTS)) expect(isStoredRunEventType(event.type)).toBe(true);
  });
});
