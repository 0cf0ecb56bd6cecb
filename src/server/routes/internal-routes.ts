import { Hono } from "hono";
import { z } from "zod";
import type { AppDeps } from "../app.js";
import type { AuthVariables } from "../auth.js";
import { readBody } from "../validation.js";

type Env = { Variables: AuthVariables };

/**
 * `POST /internal/truncate`'s body, as the official server takes it (and the official API tests'
 * `truncate()` sends it): which kinds of data to delete. `checkpoint` (what those tests send) is
 * taken as `checkpointer`.
 */
export const TruncateBody = z
  .object({
    runs: z.boolean().optional(),
    threads: z.boolean().optional(),
    assistants: z.boolean().optional(),
    checkpointer: z.boolean().optional(),
    checkpoint: z.boolean().optional(),
    store: z.boolean().optional(),
  })
  .strict();

/**
 * The official server's test-support route `POST /internal/truncate {runs?, threads?,
 * assistants?, checkpointer?, store?}` -> `{ok: true}` (`runtime.truncate`: active runs are
 * cancelled and waited for first, 409 with nothing deleted when one does not stop). It wipes a
 * server's data, so `createApp` mounts it only when DEVMIND_ALLOW_TRUNCATE is set (otherwise the
 * path is a 404, as an unknown one), and behind the API key check like every API route (a server
 * without keys is loopback-only).
 */
export function internalRoutes(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();
  app.post("/internal/truncate", async (c) => {
    const body = await readBody(c, TruncateBody);
    await deps.runtime.truncate({
      runs: body.runs,
      threads: body.threads,
      assistants: body.assistants,
      checkpointer: body.checkpointer === true || body.checkpoint === true,
      store: body.store,
    });
    return c.json({ ok: true });
  });
  return app;
}
