import { Hono } from "hono";
import { InvalidNamespaceError, type Item, type SearchItem } from "@langchain/langgraph-checkpoint";
import { z } from "zod";
import { STORE_DEFAULTS } from "../../constants.js";
import { AuthRefusalError, StoreInputError } from "../../errors.js";
import type { AccessFilter } from "../../vocabulary/access-filter.js";
import { authorize } from "../custom-auth/authorize.js";
import { matchesFilter } from "../custom-auth/auth-filter.js";
import type { AuthVariables } from "../auth.js";
import type { AppDeps } from "../app.js";
import { readBody, validate } from "../validation.js";

const label = z.string().max(STORE_DEFAULTS.maxKeyChars);
const namespace = z.array(label).max(STORE_DEFAULTS.maxNamespaceDepth);
const key = z.string().min(1).max(STORE_DEFAULTS.maxKeyChars);
const limit = (max: number) => z.number().int().min(0).max(max);

/** `PUT /store/items`: `ttl` in minutes (`null`: never expires), `index` as in LangGraph (`false`: not embedded). */
const PutItemBody = z.object({
  namespace,
  key,
  value: z.record(z.string(), z.unknown()),
  index: z.union([z.literal(false), z.array(z.string().max(1_000)).max(100)]).nullish(),
  ttl: z.number().positive().nullish(),
});
const DeleteItemBody = z.object({ namespace: namespace.nullish(), key });
const SearchItemsBody = z.object({
  namespace_prefix: namespace.nullish(),
  filter: z.record(z.string(), z.unknown()).nullish(),
  limit: limit(1_000).nullish(),
  offset: limit(1_000_000).nullish(),
  query: z.string().max(10_000).nullish(),
  refresh_ttl: z.boolean().nullish(),
});
const ListNamespacesBody = z.object({
  prefix: namespace.nullish(),
  suffix: namespace.nullish(),
  max_depth: z.number().int().min(1).max(STORE_DEFAULTS.maxNamespaceDepth).nullish(),
  limit: limit(1_000).nullish(),
  offset: limit(1_000_000).nullish(),
});
const GetItemQuery = z.object({
  namespace: z.string().max(STORE_DEFAULTS.maxKeyChars * STORE_DEFAULTS.maxNamespaceDepth).default(""),
  key,
  refresh_ttl: z.enum(["true", "false", "1", "0"]).optional(),
});

/**
 * LangGraph's namespace rule for the HTTP API: labels are non-empty and have no `.` (the wire joins
 * them with dots). `required` refuses an empty namespace (items need one; searches may omit it).
 */
function checkNamespace(labels: readonly string[], required: boolean, field: string): string[] {
  if (required && labels.length === 0) throw new StoreInputError(`${field} must have at least one label`, { field });
  for (const item of labels) {
    if (item === "" || item.includes(".")) {
      throw new StoreInputError(`${field} labels cannot be empty or contain periods, got ${JSON.stringify(labels.join(".")).slice(0, 300)}`, { field });
    }
  }
  return [...labels];
}

/** The store's own namespace refusals (`:`, NUL, the reserved `langgraph` root on put) as 422s. */
async function storeCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof InvalidNamespaceError) throw new StoreInputError(error.message);
    throw error;
  }
}

function itemWire(item: Item | SearchItem): Record<string, unknown> {
  return {
    namespace: item.namespace,
    key: item.key,
    value: item.value,
    created_at: item.createdAt.toISOString(),
    updated_at: item.updatedAt.toISOString(),
    ...("score" in item && item.score !== undefined ? { score: item.score } : {}),
  };
}

/**
 * LangGraph Platform's store API, as the SDK's `client.store` calls it, on `runtime.store`:
 *
 * - `PUT /store/items {namespace, key, value, index?, ttl?}` -> 204.
 * - `GET /store/items?namespace=a.b&key=k[&refresh_ttl=true]` -> Item `{namespace, key, value,
 *   created_at, updated_at}`, or `null` when there is none (as LangGraph's JS server answers).
 * - `DELETE /store/items {namespace, key}` -> 204.
 * - `POST /store/items/search {namespace_prefix, filter?, limit?, offset?, query?, refresh_ttl?}`
 *   -> `{items: [Item & {score?}]}`.
 * - `POST /store/namespaces {prefix?, suffix?, max_depth?, limit?, offset?}` -> `{namespaces}`.
 *
 * A namespace with an empty label or a `.` in one is 422 STORE_INPUT_INVALID, as are values the
 * store refuses (too large, NUL characters, a bad TTL).
 */
export function storeRoutes(deps: AppDeps): Hono<{ Variables: AuthVariables }> {
  const { store } = deps.runtime;
  const app = new Hono<{ Variables: AuthVariables }>();

  // with an auth handler: an item another user's filter hides is 404 (as the official server answers), never read out
  const refuseHidden = async (namespace: string[], key: string, filter: AccessFilter | undefined): Promise<"absent" | "visible"> => {
    if (filter === undefined) return "absent";
    const seen = await storeCall(() => store.visibility(namespace, key, filter));
    if (seen === "hidden") throw new AuthRefusalError(404, "Item not found");
    return seen;
  };

  app.put("/store/items", async (c) => {
    const body = await readBody(c, PutItemBody);
    const given = checkNamespace(body.namespace, true, "namespace");
    const { filter, value } = await authorize(c, "store:put", { namespace: given, key: body.key, value: body.value });
    const labels = checkNamespace(value.namespace, true, "namespace");
    await refuseHidden(labels, value.key, filter);
    // what is written must be the writer's to see: a value or namespace naming someone else is 403, nothing stored
    if (!matchesFilter({ ...value.value, namespace: labels, key: value.key }, filter)) throw new AuthRefusalError(403, "Not authorized");
    await storeCall(() => store.put(labels, value.key, value.value, body.index ?? undefined, body.ttl === undefined ? {} : { ttl: body.ttl }));
    return c.body(null, 204);
  });
  app.get("/store/items", async (c) => {
    const query = validate(GetItemQuery, { namespace: c.req.query("namespace"), key: c.req.query("key"), refresh_ttl: c.req.query("refresh_ttl") });
    const given = checkNamespace(query.namespace === "" ? [] : query.namespace.split("."), true, "namespace");
    const { filter, value } = await authorize(c, "store:get", { namespace: given, key: query.key });
    const labels = checkNamespace(value.namespace, true, "namespace");
    if ((await refuseHidden(labels, value.key, filter)) === "absent" && filter !== undefined) return c.json(null);
    const refreshTtl = query.refresh_ttl === undefined ? undefined : query.refresh_ttl === "true" || query.refresh_ttl === "1";
    const item = await storeCall(() => store.get(labels, value.key, { refreshTtl }));
    return c.json(item === null ? null : itemWire(item));
  });
  app.delete("/store/items", async (c) => {
    const body = await readBody(c, DeleteItemBody);
    const given = checkNamespace(body.namespace ?? [], true, "namespace");
    const { filter, value } = await authorize(c, "store:delete", { namespace: given, key: body.key });
    const labels = checkNamespace(value.namespace, true, "namespace");
    if ((await refuseHidden(labels, value.key, filter)) === "absent" && !matchesFilter({ namespace: labels, key: value.key }, filter)) throw new AuthRefusalError(403, "Not authorized");
    await storeCall(() => store.delete(labels, value.key));
    return c.body(null, 204);
  });
  app.post("/store/items/search", async (c) => {
    const body = await readBody(c, SearchItemsBody);
    const given = checkNamespace(body.namespace_prefix ?? [], false, "namespace_prefix");
    const { filter, value } = await authorize(c, "store:search", { namespace: given, filter: body.filter ?? undefined, limit: body.limit ?? undefined, offset: body.offset ?? undefined, query: body.query ?? undefined });
    const prefix = checkNamespace(value.namespace, false, "namespace_prefix");
    const items = await storeCall(() =>
      store.search(prefix, {
        access: filter,
        filter: body.filter ?? undefined,
        limit: body.limit ?? STORE_DEFAULTS.searchLimit,
        offset: body.offset ?? 0,
        query: body.query ?? undefined,
        refreshTtl: body.refresh_ttl ?? undefined,
      }),
    );
    return c.json({ items: items.map(itemWire) });
  });
  app.post("/store/namespaces", async (c) => {
    const body = await readBody(c, ListNamespacesBody);
    const given = {
      prefix: body.prefix === undefined || body.prefix === null ? undefined : checkNamespace(body.prefix, false, "prefix"),
      suffix: body.suffix === undefined || body.suffix === null ? undefined : checkNamespace(body.suffix, false, "suffix"),
    };
    const { filter, value } = await authorize(c, "store:list_namespaces", { namespace: given.prefix, suffix: given.suffix, max_depth: body.max_depth ?? undefined, limit: body.limit ?? undefined, offset: body.offset ?? undefined });
    const options = {
      prefix: value.namespace === undefined ? undefined : checkNamespace(value.namespace, false, "prefix"),
      suffix: value.suffix === undefined ? undefined : checkNamespace(value.suffix, false, "suffix"),
      maxDepth: body.max_depth ?? undefined,
      limit: body.limit ?? STORE_DEFAULTS.listLimit,
      offset: body.offset ?? 0,
    };
    const namespaces = await storeCall(() => (filter === undefined ? store.listNamespaces(options) : store.listVisibleNamespaces({ ...options, access: filter })));
    return c.json({ namespaces });
  });
  return app;
}
