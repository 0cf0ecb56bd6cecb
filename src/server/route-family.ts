/**
 * Which API a request belongs to, for how its errors read (CONTRACT section 8): LangGraph
 * Platform's routes answer errors as the official server does (`officialErrorResponse`),
 * devmind's own routes as `{"error": CODE, "message": TEXT}` (`errorResponse`).
 */
export type RouteFamily = "langgraph" | "devmind";

/** Path prefixes of LangGraph Platform's API (and the official server's `/internal/truncate`). */
const LANGGRAPH_PREFIXES = ["/assistants", "/threads", "/runs", "/store", "/internal"] as const;

/**
 * devmind's own routes under a LangGraph prefix: the full run record, its events, decisions and
 * cancel (`GET /runs`, `GET /runs/{id}`, `GET /runs/{id}/events`, `POST /runs/{id}/decisions`,
 * `POST /runs/{id}/cancel`). `POST /runs/cancel` (two segments) is LangGraph's `cancelMany`.
 */
const DEVMIND_UNDER_LANGGRAPH: readonly { method: string; path: RegExp }[] = [
  { method: "GET", path: /^\/runs\/?$/ },
  { method: "GET", path: /^\/runs\/[^/]+\/?$/ },
  { method: "GET", path: /^\/runs\/[^/]+\/events\/?$/ },
  { method: "POST", path: /^\/runs\/[^/]+\/decisions\/?$/ },
  { method: "POST", path: /^\/runs\/[^/]+\/cancel\/?$/ },
];

/**
 * The family of `method path`: "langgraph" under LANGGRAPH_PREFIXES except devmind's own run
 * routes (DEVMIND_UNDER_LANGGRAPH; `GET /runs/crons/...` stays LangGraph's), "devmind" for
 * everything else (`/health`, `/approvals`, `/files`, the web page, unknown paths).
 */
export function routeFamily(method: string, path: string): RouteFamily {
  const underLangGraph = LANGGRAPH_PREFIXES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
  if (!underLangGraph) return "devmind";
  if (path.startsWith("/runs/crons")) return "langgraph";
  const upper = method.toUpperCase();
  return DEVMIND_UNDER_LANGGRAPH.some((route) => route.method === upper && route.path.test(path)) ? "devmind" : "langgraph";
}
