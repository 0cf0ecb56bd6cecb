import type { Context } from "hono";
import type { ErrorResponse, ReconnectResult } from "@langchain/protocol";
import { PROTOCOL_DEFAULTS } from "../../constants.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { CommandParams, EventFilter } from "../../runtime/protocol/command-schema.js";
import { matchesFilter } from "../../runtime/protocol/event-filter.js";
import { eventIdPosition, positionOf, seqOf } from "../../runtime/protocol/event-position.js";
import { filterOfSubscriptionId } from "../../runtime/protocol/subscription-id.js";
import type { AuthVariables } from "../auth.js";
import { visibleThread } from "../custom-auth/thread-access.js";
import { commandFailure, protocolError } from "./protocol-errors.js";
import type { ProjectionFrom } from "./thread-projection.js";
import { eventsUntilNow, runAgentTree, treeStatuses } from "./thread-now.js";
import { threadRunsOldestFirst } from "./thread-runs.js";

type Ctx = Context<{ Variables: AuthVariables }>;

/** What a `subscription.reconnect` restores: each subscription's filter, the position after which they resume, and the answer. */
export interface ReconnectPlan {
  subscriptions: Map<string, EventFilter>;
  since: number;
  from: ProjectionFrom;
  result: ReconnectResult;
}

/**
 * Plans `subscription.reconnect {run_id, last_event_id?, subscriptions?}` on a thread, from what
 * is stored (nothing of a subscription is kept in memory: its id names its filter), so it works on
 * any connection of any server process, after a restart:
 * - `subscriptions`: the ids to restore (a subscription id names its filter); omitted, the ones
 *   open on this connection (`open`). An id this server did not give: `no_such_subscription`.
 * - the position: after `last_event_id` (an `event_id` this server sent, or a `seq`), else from
 *   the start of run `run_id` (a run of this thread, else `no_such_run`).
 * - the answer: `restored` (true when a subscription is restored), `missed_events` (the events
 *   after that position the restored subscriptions get from what is stored now, each counted
 *   once), `current_namespaces` (the thread's newest run's agent tree, flattened).
 * Bad input is the protocol's error; nothing is stored.
 */
export async function planReconnect(c: Ctx, runtime: Runtime, threadId: string, id: number, params: CommandParams<"subscription.reconnect">, open: ReadonlyMap<string, EventFilter>): Promise<ReconnectPlan | ErrorResponse> {
  try {
    await visibleThread(c, runtime, "read", threadId);
  } catch (error) {
    return commandFailure(id, error);
  }
  const subscriptions = new Map<string, EventFilter>();
  for (const subscriptionId of params.subscriptions ?? [...open.keys()]) {
    const filter = open.get(subscriptionId) ?? filterOfSubscriptionId(subscriptionId);
    if (filter === undefined) return protocolError(id, "no_such_subscription", `no subscription ${JSON.stringify(subscriptionId.slice(0, 100))}: not an id this server gave`);
    subscriptions.set(subscriptionId, { channels: filter.channels, namespaces: filter.namespaces, depth: filter.depth });
  }
  const runs = await threadRunsOldestFirst(runtime, threadId);
  const runOrdinal = runs.findIndex((run) => run.run_id === params.run_id) + 1;
  if (runOrdinal === 0) return protocolError(id, "no_such_run", `no run ${JSON.stringify(params.run_id.slice(0, 100))} on this thread`);
  let since = runOrdinal * PROTOCOL_DEFAULTS.runSeqSpan;
  if (params.last_event_id !== undefined) {
    const position = eventIdPosition(params.last_event_id);
    const ordinal = position === undefined || "seq" in position ? undefined : runs.findIndex((run) => run.run_id === position.runId) + 1;
    if (position === undefined || ordinal === 0) return protocolError(id, "invalid_argument", `last_event_id ${JSON.stringify(params.last_event_id.slice(0, 100))} names no event of this thread`);
    since = "seq" in position ? position.seq : seqOf({ ordinal: ordinal as number, part: position.part, index: position.index });
  }
  const ordinal = positionOf(since).ordinal;
  if (ordinal > runs.length) return protocolError(id, "invalid_argument", `last_event_id is beyond the end of this thread's events`);
  const from: ProjectionFrom = { ordinal: Math.max(ordinal, 1), runs };
  let missed = 0;
  if (subscriptions.size > 0) {
    for await (const event of eventsUntilNow(runtime, runs, from.ordinal, since)) {
      if ([...subscriptions.values()].some((filter) => matchesFilter({ ...filter, since }, event as never))) missed += 1;
    }
  }
  const newest = runs[runs.length - 1];
  const current = newest === undefined ? [] : treeStatuses(await runAgentTree(runtime, runs, newest));
  return { subscriptions, since, from, result: { restored: subscriptions.size > 0, missed_events: missed, current_namespaces: current } };
}
