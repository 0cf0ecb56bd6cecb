// What a run's status looks like in the page's run list. A run's own status is LangGraph
// Platform's (a run that ended at an interrupt is `success` with stop reason `interrupt`); what a
// person wants to see is whether it waits for them, runs, finished, failed or was cancelled, so
// the run's stop reason and its thread (`waiting`: the thread waits on this run) decide.
// Pure (no DOM), so it is unit-tested in Node.

/**
 * @typedef {"waiting" | "running" | "pending" | "finished" | "answered" | "failed" | "cancelled" | "unknown"} ListStatus
 * @typedef {{ key: ListStatus, text: string, title: string }} RunListStatus
 */

/**
 * The list status of a run record: `waiting` (its thread waits on it: an approval or any
 * interrupt), `answered` (it stopped at an interrupt that a later run resumed), `running`,
 * `pending`, `finished` (success), `failed` (error or timeout), `cancelled` (LangGraph's
 * `interrupted`). A record without devmind's `waiting` field (a LangGraph server) is waiting when
 * the caller saw its thread `interrupted` and it is the thread's newest run (`threadWaiting`).
 * @param {Record<string, any>} run
 * @param {{ threadWaiting?: boolean }} [thread]
 * @returns {RunListStatus}
 */
export function runListStatus(run, thread = {}) {
  const status = String(run?.status ?? "");
  const reason = typeof run?.stop_reason === "string" ? run.stop_reason : null;
  const code = typeof run?.error?.code === "string" ? run.error.code : null;
  switch (status) {
    case "pending":
      return { key: "pending", text: "pending", title: "queued: no worker has started it yet" };
    case "running":
      return { key: "running", text: "running", title: "running now" };
    case "success": {
      const waits = run?.waiting === true || (run?.waiting === undefined && thread.threadWaiting === true);
      if (waits) return { key: "waiting", text: "waiting", title: "waits for you: an approval or a value to resume it" };
      if (reason === "interrupt") return { key: "answered", text: "answered", title: "stopped at an interrupt that a later run answered" };
      return { key: "finished", text: "finished", title: reason === null ? "finished" : `finished (${reason})` };
    }
    case "error":
    case "timeout":
      return { key: "failed", text: status === "timeout" ? "timed out" : "failed", title: [reason, code].filter((part) => part !== null).join(": ") || status };
    case "interrupted":
      return { key: "cancelled", text: "cancelled", title: reason === null || reason === "cancelled" ? "cancelled" : `cancelled (${reason})` };
    default:
      return { key: "unknown", text: status === "" ? "?" : status, title: status };
  }
}
