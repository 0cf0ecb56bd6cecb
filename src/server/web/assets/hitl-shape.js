// Reads an interrupt value in LangChain's human-in-the-loop shape — what `createAgent`'s
// humanInTheLoopMiddleware raises and devmind's agent raises: `{actionRequests | action_requests:
// [{name, args, description}], reviewConfigs | review_configs: [{actionName | action_name,
// allowedDecisions | allowed_decisions}]}` — into what the page's review cards need.
// Pure (no DOM), so it is unit-tested in Node.

/** Decision types LangChain's middleware takes; "respond" on the page is a reject carrying the reply. */
export const DECISION_TYPES = ["approve", "edit", "reject"];

/**
 * @typedef {{ index: number, name: string, args: Record<string, unknown>, description: string | null, toolCallId: string | null, risk: string | null, allowed: string[] }} ReviewAction
 * @typedef {{ actions: ReviewAction[], named: boolean }} ReviewRequest
 */

/** @param {unknown} value @returns {Record<string, any> | null} */
function record(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? /** @type {Record<string, any>} */ (value) : null;
}

/**
 * The review request of an interrupt value, or null when it is not in the HITL shape (then the
 * page answers it with a JSON value). `allowed` lists the decisions the action's review config
 * allows (all three without one); `named` is true when every action names its tool call
 * (devmind's agent: each decided on its own), false for LangChain's middleware (one decision per
 * action, in order, sent together).
 * @param {unknown} value
 * @returns {ReviewRequest | null}
 */
export function reviewRequest(value) {
  const body = record(value);
  if (body === null) return null;
  const list = Array.isArray(body["actionRequests"]) ? body["actionRequests"] : Array.isArray(body["action_requests"]) ? body["action_requests"] : null;
  if (list === null || list.length === 0 || !list.every((action) => typeof record(action)?.["name"] === "string")) return null;
  const configs = (Array.isArray(body["reviewConfigs"]) ? body["reviewConfigs"] : Array.isArray(body["review_configs"]) ? body["review_configs"] : [])
    .map(record)
    .filter((config) => config !== null);
  const actions = list.map((raw, index) => {
    const action = /** @type {Record<string, any>} */ (record(raw));
    const name = String(action["name"]);
    const config = configs.find((item) => (item["actionName"] ?? item["action_name"]) === name);
    const allowedRaw = config === undefined ? DECISION_TYPES : (config["allowedDecisions"] ?? config["allowed_decisions"]);
    const allowed = Array.isArray(allowedRaw) ? DECISION_TYPES.filter((type) => allowedRaw.includes(type)) : DECISION_TYPES;
    return {
      index,
      name,
      args: record(action["args"]) ?? {},
      description: typeof action["description"] === "string" && action["description"] !== "" ? action["description"] : null,
      toolCallId: typeof action["tool_call_id"] === "string" ? action["tool_call_id"] : null,
      risk: typeof action["risk"] === "string" ? action["risk"] : null,
      allowed,
    };
  });
  return { actions, named: actions.every((action) => action.toolCallId !== null) };
}

/**
 * The decision a card sends, in CONTRACT section 5's shape (`POST /runs/{id}/decisions`), which
 * is LangChain's own: a reply ("respond") is a reject whose message the model reads in place of
 * the tool's result; an edit keeps the tool's name. The call is named when the action names it.
 * @param {ReviewAction} action
 * @param {{ type: "approve" } | { type: "edit", args: Record<string, unknown> } | { type: "reject", message?: string } | { type: "respond", message: string }} choice
 * @returns {Record<string, unknown>}
 */
export function decisionFor(action, choice) {
  const named = action.toolCallId === null ? {} : { tool_call_id: action.toolCallId };
  if (choice.type === "approve") return { type: "approve", ...named };
  if (choice.type === "edit") return { type: "edit", ...named, editedAction: { name: action.name, args: choice.args } };
  const message = choice.message?.trim();
  return message === undefined || message === "" ? { type: "reject", ...named } : { type: "reject", ...named, message };
}
