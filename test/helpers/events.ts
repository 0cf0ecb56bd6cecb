import type { RunEventEnvelope } from "../../src/runtime/events/event-store.js";

/**
 * A stored run event as assertions read it: its envelope and type, and every field by name as
 * plain JSON (`event["tool_call_id"]`). Tests check what was stored, typed or not; code in src/
 * narrows with `isRunEvent` and `event.type` instead.
 */
export type EventRecord = RunEventEnvelope & { type: string; [field: string]: unknown };
