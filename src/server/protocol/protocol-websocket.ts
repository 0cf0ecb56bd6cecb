import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Context } from "hono";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import type { AppDeps } from "../app.js";
import type { AuthVariables } from "../auth.js";
import { CommandEnvelope, COMMAND_PARAMS, filterOf, issuesText, type EventFilter } from "../../runtime/protocol/command-schema.js";
import { subscriptionIdOf } from "../../runtime/protocol/subscription-id.js";
import { planReconnect } from "./reconnect.js";
import { handleCommand } from "./protocol-commands.js";
import { protocolError } from "./protocol-errors.js";
import { SinceBeyondEndError, startOrdinal, type ProjectionFrom } from "./thread-projection.js";
import { filteredEvents } from "./thread-events.js";
import { PROTOCOL_DEFAULTS } from "../../constants.js";

type Ctx = Context<{ Variables: AuthVariables }>;

/**
 * Upgrades the requests `protocolRoutes` accepted (`GET /threads/{id}/stream/events` with
 * `Upgrade: websocket`, past the API key / auth handler gate and the thread check): the route
 * leaves the session to open here, keyed by its Request.
 */
export const acceptedUpgrades = new WeakMap<Request, (socket: WebSocket) => void>();

/**
 * Serves the protocol over a WebSocket on the node server: each upgrade request goes through
 * the Hono app (`fetch`) as an ordinary request first, so the same gate, auth handler and thread
 * check apply; only a request the route accepted is upgraded, anything else gets the app's
 * answer (401, 404, 426) and the socket is closed.
 */
export function protocolUpgrade(fetch: (request: Request) => Response | Promise<Response>): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const wss = new WebSocketServer({ noServer: true });
  return (req, socket, head) => {
    void (async () => {
      const host = req.headers.host ?? "localhost";
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string") headers.set(name, value);
        else if (Array.isArray(value)) headers.set(name, value.join(", "));
      }
      const request = new Request(`http://${host}${req.url ?? "/"}`, { method: "GET", headers });
      let response: Response;
      try {
        response = await fetch(request);
      } catch {
        response = new Response("internal error", { status: 500 });
      }
      const accept = acceptedUpgrades.get(request);
      if (accept === undefined || response.status !== 200) {
        const body = await response.text().catch(() => "");
        socket.end(`HTTP/1.1 ${response.status} ${response.statusText || "Refused"}\r\ncontent-type: ${response.headers.get("content-type") ?? "text/plain"}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => accept(ws));
    })();
  };
}

function frameText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.from(data as ArrayBuffer).toString("utf8");
}

/**
 * One WebSocket session on a thread (the protocol's in-band model): every frame is a command;
 * `subscription.subscribe` starts a subscription (the answer `{subscription_id}` first, then its
 * events, each JSON frame an event), `subscription.unsubscribe` ends one,
 * `subscription.reconnect` restores subscriptions by id after a position (`planReconnect`: the
 * answer, then each one's events after it), other commands are answered as over HTTP
 * (`handleCommand`). A frame that is not JSON, or a bad command, is answered with the
 * protocol's error and the connection and its subscriptions live on. Subscriptions end when the
 * socket closes; their ids name their filters, so a later connection restores them.
 */
export function openProtocolSession(c: Ctx, deps: AppDeps, threadId: string, absent: boolean, socket: WebSocket): void {
  const subscriptions = new Map<string, { controller: AbortController; filter: EventFilter }>();
  const order = new SessionOrder();
  const closed = new AbortController();
  const send = (message: unknown): void => {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
  };
  deps.shutdown?.addEventListener("abort", () => socket.close(1001, "server shutting down"), { once: true });
  socket.on("close", () => {
    closed.abort();
    for (const { controller } of subscriptions.values()) controller.abort();
    subscriptions.clear();
  });
  /** Sends a subscription's events (`filter`, from `from`) until it is ended; a subscription open under the same id is replaced. */
  const follow = async (subscriptionId: string, filter: EventFilter, from: ProjectionFrom): Promise<void> => {
    subscriptions.get(subscriptionId)?.controller.abort();
    const controller = new AbortController();
    const entry = { controller, filter: { channels: filter.channels, namespaces: filter.namespaces, depth: filter.depth } };
    subscriptions.set(subscriptionId, entry);
    order.open(subscriptionId);
    closed.signal.addEventListener("abort", () => controller.abort(), { once: true });
    try {
      for await (const event of filteredEvents(c, deps, threadId, filter, from, absent, controller.signal, (seq) => order.reach(subscriptionId, seq))) {
        if (controller.signal.aborted) break;
        if (isRootTerminal(event) && typeof event.seq === "number") await order.othersReached(subscriptionId, event.seq, controller.signal);
        if (controller.signal.aborted) break;
        send(event);
      }
    } catch (error) {
      if (!controller.signal.aborted) send(protocolError(null, "unknown_error", `subscription ${subscriptionId.slice(0, 100)} ended: ${(error as Error).message.slice(0, 200)}`));
    } finally {
      // a reconnect may have replaced it under the same id: only its own entry goes
      if (subscriptions.get(subscriptionId) === entry) {
        subscriptions.delete(subscriptionId);
        order.close(subscriptionId);
      }
    }
  };
  socket.on("message", (data, isBinary) => {
    void (async () => {
      let raw: unknown;
      try {
        raw = JSON.parse(isBinary ? frameText(data) : data.toString());
      } catch {
        send(protocolError(null, "invalid_argument", "Protocol commands must be valid JSON."));
        return;
      }
      const envelope = CommandEnvelope.safeParse(raw);
      if (!envelope.success) {
        send(protocolError(null, "invalid_argument", `invalid command: ${issuesText(envelope.error)}`));
        return;
      }
      const { id, method } = envelope.data;
      if (method === "subscription.subscribe") {
        const params = COMMAND_PARAMS["subscription.subscribe"].safeParse(envelope.data.params ?? {});
        if (!params.success) return send(protocolError(id, "invalid_argument", `invalid params for ${method}: ${issuesText(params.error)}`));
        const filtered = filterOf(params.data);
        if ("unknownChannel" in filtered) return send(protocolError(id, "invalid_argument", `unknown channel ${JSON.stringify(filtered.unknownChannel.slice(0, 100))}`));
        let from: ProjectionFrom;
        try {
          from = await startOrdinal(deps.runtime, threadId, { since: filtered.filter.since });
        } catch (error) {
          if (error instanceof SinceBeyondEndError) return send(protocolError(id, "invalid_argument", error.message));
          return send(protocolError(id, "unknown_error", "could not read the thread's runs; try again"));
        }
        const subscriptionId = subscriptionIdOf(filtered.filter);
        send({ type: "success", id, result: { subscription_id: subscriptionId }, meta: { thread_id: threadId } });
        await follow(subscriptionId, filtered.filter, from);
        return;
      }
      if (method === "subscription.unsubscribe") {
        const params = COMMAND_PARAMS["subscription.unsubscribe"].safeParse(envelope.data.params ?? {});
        if (!params.success) return send(protocolError(id, "invalid_argument", `invalid params for ${method}: ${issuesText(params.error)}`));
        const open = subscriptions.get(params.data.subscription_id);
        if (open === undefined) return send(protocolError(id, "no_such_subscription", `no subscription ${JSON.stringify(params.data.subscription_id.slice(0, 100))} on this connection`));
        open.controller.abort();
        subscriptions.delete(params.data.subscription_id);
        order.close(params.data.subscription_id);
        return send({ type: "success", id, result: {}, meta: { thread_id: threadId } });
      }
      if (method === "subscription.reconnect") {
        const params = COMMAND_PARAMS["subscription.reconnect"].safeParse(envelope.data.params ?? {});
        if (!params.success) return send(protocolError(id, "invalid_argument", `invalid params for ${method}: ${issuesText(params.error)}`));
        let plan: Awaited<ReturnType<typeof planReconnect>>;
        try {
          plan = await planReconnect(c, deps.runtime, threadId, id, params.data, new Map([...subscriptions].map(([key, open]) => [key, open.filter])));
        } catch {
          return send(protocolError(id, "unknown_error", "could not read the thread's events; try again"));
        }
        if ("error" in plan) return send(plan);
        send({ type: "success", id, result: plan.result, meta: { thread_id: threadId } });
        await Promise.all([...plan.subscriptions].map(([subscriptionId, filter]) => follow(subscriptionId, { ...filter, since: plan.since }, plan.from)));
        return;
      }
      send(await handleCommand({ c, runtime: deps.runtime, threadId, selfUrl: deps.selfUrl?.() }, raw));
    })();
  });
}

/** A root `lifecycle` event that ends a run (completed, failed, interrupted). */
function isRootTerminal(event: { method?: string; params?: unknown }): boolean {
  if (event.method !== "lifecycle") return false;
  const params = event.params as { namespace?: unknown[]; data?: { event?: unknown } } | undefined;
  return params?.namespace?.length === 0 && ["completed", "failed", "interrupted"].includes(String(params.data?.event));
}

/**
 * The order of one session's subscriptions on its socket. Each subscription projects the thread
 * on its own, but the SDK reads the socket as one stream: a run's terminal `lifecycle` pauses its
 * other subscriptions, so it must not overtake their events before it (e.g. the final `values` a
 * values subscription has yet to send). A subscription holds a run's terminal event until every
 * other open subscription of the session came to that position (or ended), at most
 * PROTOCOL_DEFAULTS.sessionOrderWaitMs.
 */
class SessionOrder {
  private readonly reached = new Map<string, number>();
  private waiters: (() => void)[] = [];

  open(id: string): void {
    this.reached.set(id, -1);
  }

  reach(id: string, seq: number): void {
    if (seq > (this.reached.get(id) ?? -1)) this.reached.set(id, seq);
    this.wake();
  }

  close(id: string): void {
    this.reached.delete(id);
    this.wake();
  }

  async othersReached(id: string, seq: number, signal: AbortSignal): Promise<void> {
    const behind = (): boolean => [...this.reached].some(([other, at]) => other !== id && at < seq);
    const deadline = Date.now() + PROTOCOL_DEFAULTS.sessionOrderWaitMs;
    while (behind() && !signal.aborted && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private wake(): void {
    const waiting = this.waiters;
    this.waiters = [];
    for (const resolve of waiting) resolve();
  }
}
