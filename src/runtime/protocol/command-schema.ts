import { z } from "zod";
import type { Channel } from "@langchain/protocol";
import { isSupportedChannel } from "@langchain/langgraph/stream";
import { PROTOCOL_DEFAULTS } from "../../constants.js";

const record = z.record(z.string(), z.unknown());
const namespace = z.array(z.string().max(512)).max(64);
const goto = z.union([z.string(), z.unknown()]);

/** The envelope of every command: a non-negative integer `id`, a `method`, optional object `params`. */
export const CommandEnvelope = z.object({ id: z.number().int().nonnegative(), method: z.string().min(1).max(100), params: record.optional() }).passthrough();

const RunStart = z
  .object({
    assistant_id: z.string().min(1).max(256),
    input: z.unknown().optional(),
    config: record.nullish(),
    metadata: record.nullish(),
    multitaskStrategy: z.enum(["reject", "enqueue", "interrupt", "rollback"]).nullish(),
    langsmith_tracer: record.nullish(),
  })
  .passthrough();

const RespondEntry = z.object({ namespace: namespace.optional(), interrupt_id: z.string().min(1).max(256), response: z.unknown() }).passthrough();
const RespondCommon = { update: z.unknown().optional(), goto: goto.optional(), config: record.nullish(), metadata: record.nullish() };
const InputRespond = z.union([
  z.object({ responses: z.array(RespondEntry).min(1).max(100), ...RespondCommon }).passthrough(),
  z.object({ namespace: namespace.optional(), interrupt_id: z.string().min(1).max(256), response: z.unknown(), ...RespondCommon }).passthrough(),
]);

const InputInject = z.object({ namespace: namespace.optional(), message: z.object({ role: z.enum(["user", "system"]), content: z.string(), name: z.string().optional() }).passthrough() }).passthrough();
const StateGet = z.object({ namespace: namespace.optional(), keys: z.array(z.string()).optional() }).passthrough();
const ListCheckpoints = z.object({ namespace: namespace.optional(), limit: z.number().int().positive().max(1000).optional(), before: z.string().max(256).optional() }).passthrough();
const StateFork = z.object({ checkpoint_id: z.string().min(1).max(256), input: z.unknown().optional(), config: record.nullish() }).passthrough();
const GetTree = z.object({ run_id: z.string().max(256).optional() }).passthrough();
const Subscribe = z.object({ channels: z.array(z.string()).min(1).max(32), namespaces: z.array(namespace).max(64).optional(), depth: z.number().int().nonnegative().optional(), since: z.number().int().nonnegative().optional() }).passthrough();
const subscriptionId = z.string().min(1).max(PROTOCOL_DEFAULTS.subscriptionIdMaxChars);
const Unsubscribe = z.object({ subscription_id: subscriptionId }).passthrough();
const Reconnect = z.object({ run_id: z.string().min(1).max(256), last_event_id: z.string().min(1).max(1024).optional(), subscriptions: z.array(subscriptionId).max(PROTOCOL_DEFAULTS.reconnectSubscriptionsMax).optional() }).passthrough();

/** The params schema of each method this server answers. */
export const COMMAND_PARAMS = {
  "run.start": RunStart,
  "input.respond": InputRespond,
  "input.inject": InputInject,
  "state.get": StateGet,
  "state.listCheckpoints": ListCheckpoints,
  "state.fork": StateFork,
  "agent.getTree": GetTree,
  "subscription.subscribe": Subscribe,
  "subscription.unsubscribe": Unsubscribe,
  "subscription.reconnect": Reconnect,
} as const;

/** A method this server answers. */
export type CommandMethod = keyof typeof COMMAND_PARAMS;

/** The validated params of `method`. */
export type CommandParams<M extends CommandMethod> = z.output<(typeof COMMAND_PARAMS)[M]>;

/** True for a method of COMMAND_PARAMS. */
export function isCommandMethod(method: string): method is CommandMethod {
  return Object.hasOwn(COMMAND_PARAMS, method);
}

/** A zod error as one line naming the first problems (`path: message`). */
export function issuesText(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "params"}: ${issue.message}`)
    .join("; ");
}

/** An event filter: channels, namespace prefixes, depth below them, and the position after which events are sent. */
export interface EventFilter {
  channels: ReadonlySet<Channel>;
  namespaces?: string[][] | undefined;
  depth?: number | undefined;
  since?: number | undefined;
}

/** The body of `POST /threads/{id}/stream/events` (and `subscription.subscribe`'s params), strict as the official server's. */
export const EventStreamBody = z
  .object({ channels: z.array(z.string().max(200)).min(1).max(32), namespaces: z.array(namespace).max(64).optional(), depth: z.number().int().nonnegative().optional(), since: z.number().int().nonnegative().optional() })
  .strict();

/** The filter of a validated body; a channel the protocol does not have is an error naming it (`unknownChannel`). */
export function filterOf(body: { channels: string[]; namespaces?: string[][] | undefined; depth?: number | undefined; since?: number | undefined }): { filter: EventFilter } | { unknownChannel: string } {
  const unknown = body.channels.find((channel) => !isSupportedChannel(channel));
  if (unknown !== undefined) return { unknownChannel: unknown };
  return { filter: { channels: new Set(body.channels as Channel[]), namespaces: body.namespaces, depth: body.depth, since: body.since } };
}
