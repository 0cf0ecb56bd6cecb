import { Hono, type Context } from "hono";
import type { AppDeps } from "../app.js";
import type { AuthVariables } from "../auth.js";
import { sseResponse } from "../sse.js";
import type { StreamPart } from "../run-stream.js";
import { EventStreamBody, filterOf, issuesText } from "../../runtime/protocol/command-schema.js";
import { handleCommand } from "./protocol-commands.js";
import { protocolError } from "./protocol-errors.js";
import { SinceBeyondEndError, startOrdinal, type ProjectionFrom } from "./thread-projection.js";
import { filteredEvents, threadFollowable } from "./thread-events.js";
import { acceptedUpgrades, openProtocolSession } from "./protocol-websocket.js";

type Env = { Variables: AuthVariables };
type Ctx = Context<Env>;

/** A 400 in the protocol's error shape, naming the problem. */
function badRequest(c: Ctx, message: string): Response {
  return c.json(protocolError(null, "invalid_argument", message), 400);
}

async function readJsonText(c: Ctx): Promise<{ value: unknown } | { error: string }> {
  const text = await c.req.text();
  try {
    return { value: text.trim() === "" ? {} : (JSON.parse(text) as unknown) };
  } catch {
    return { error: "the request body is not valid JSON" };
  }
}

/**
 * The event-based protocol over HTTP (`@langchain/protocol`, docs/protocol.md), behind the same
 * API key / auth handler gate as every route: `POST /threads/{id}/commands` (one command, its
 * answer as JSON: `handleCommand`) and `POST /threads/{id}/stream/events` (`{channels,
 * namespaces?, depth?, since?}`: an SSE stream of the thread's events that pass the filter, each
 * with `id:` its `event_id`, from the thread's newest run, or after `since`). Bad input is a 400
 * in the protocol's error shape naming the problem; nothing is stored for it.
 */
export function protocolRoutes(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();
  app.post("/threads/:tid/commands", async (c) => {
    const read = await readJsonText(c);
    if ("error" in read) return badRequest(c, read.error);
    return c.json(await handleCommand({ c, runtime: deps.runtime, threadId: c.req.param("tid"), selfUrl: deps.selfUrl?.() }, read.value));
  });
  // the WebSocket transport: the upgrade (`protocolUpgrade`) opens the session this route accepts
  app.get("/threads/:tid/stream/events", async (c) => {
    if (c.req.header("upgrade")?.toLowerCase() !== "websocket") return c.json(protocolError(null, "invalid_argument", "GET /threads/{id}/stream/events is the WebSocket transport: send Upgrade: websocket (or POST for SSE)"), 426);
    const threadId = c.req.param("tid");
    const access = await threadFollowable(c, deps, threadId);
    acceptedUpgrades.set(c.req.raw, (socket) => openProtocolSession(c, deps, threadId, access === "absent", socket));
    return c.body(null, 200);
  });
  app.post("/threads/:tid/stream/events", async (c) => {
    const threadId = c.req.param("tid");
    const read = await readJsonText(c);
    if ("error" in read) return badRequest(c, read.error);
    const body = EventStreamBody.safeParse(read.value);
    if (!body.success) return badRequest(c, `invalid event stream request: ${issuesText(body.error)}`);
    const filtered = filterOf(body.data);
    if ("unknownChannel" in filtered) return badRequest(c, `unknown channel ${JSON.stringify(filtered.unknownChannel.slice(0, 100))}`);
    const { filter } = filtered;
    // the access check and the thread's runs read at once (one round trip less before the first event); the runs are used only once access is granted
    const [access, start] = await Promise.all([threadFollowable(c, deps, threadId), startOrdinal(deps.runtime, threadId, { since: filter.since }).then((from) => ({ from }), (error: unknown) => ({ error }))]);
    if ("error" in start) {
      if (start.error instanceof SinceBeyondEndError) return badRequest(c, start.error.message);
      throw start.error;
    }
    const from: ProjectionFrom = start.from;
    return sseResponse(
      c,
      async function* parts(signal): AsyncGenerator<StreamPart> {
        for await (const event of filteredEvents(c, deps, threadId, filter, from, access === "absent", signal)) {
          yield { event: event.method, data: event, ...(event.event_id === undefined ? {} : { id: event.event_id }) };
        }
      },
      { shutdown: deps.shutdown, heartbeatMs: deps.heartbeatMs },
    );
  });
  return app;
}
