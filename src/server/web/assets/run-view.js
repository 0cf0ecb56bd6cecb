// One run on the page, for any graph: its header (status, stop reason), the drawing of its graph
// with the current node highlighted, the live timeline built from its events (CONTRACT section 6:
// nodes, model rounds, tool calls as folded lines), the review panel for interrupts in LangChain's
// human-in-the-loop shape, a JSON box for any other interrupt, the thread's state as a foldable
// tree, and the final answer.

import { ApiError, request } from "./api.js";
import { append, byId, el, prettyJson, timeOf } from "./dom.js";
import { GraphView } from "./graph-view.js";
import { HitlPanel } from "./hitl-panel.js";
import { reviewRequest } from "./hitl-shape.js";
import { InterruptPanel } from "./interrupts.js";
import { jsonTree, TreeFolds } from "./json-tree.js";
import { RunNodes } from "./run-nodes.js";
import { ToolLine } from "./tool-line.js";

/** @typedef {import("./sse.js").StreamEvent} StreamEvent */
/** @typedef {import("./interrupts.js").RunInterrupt} RunInterrupt */
/** @typedef {{ name: string, args: Record<string, unknown>, description?: string, tool_call_id: string, risk?: string }} ActionRequest */

const TERMINAL = new Set(["success", "error", "timeout", "interrupted"]);
/** The tool error code of a call that may or may not have taken effect (CONTRACT section 4). */
const UNKNOWN_OUTCOME = "TOOL_OUTCOME_UNKNOWN";

/** Renders one run into the page's run panel; `dispose` before showing another. */
export class RunView {
  /**
   * @param {{ run_id: string, thread_id: string, status?: string, graph_id?: string }} run
   * @param {{ onDecided: () => void, onFinished: () => void, onStatus: (status: string) => void, onResumed: (runId: string) => void }} hooks
   */
  constructor(run, hooks) {
    this.runId = run.run_id;
    this.threadId = run.thread_id;
    this.graphId = typeof run.graph_id === "string" ? run.graph_id : "agent";
    /** Decisions shown since the last resume (the resume they make adds no line). */
    this.decisionsShown = 0;
    /** @type {unknown} the digest of the last resume shown (the next run repeats it as its first event) */
    this.resumeShown = undefined;
    /** The run ended at an interrupt and its thread waits on it: its approvals and interrupts can be answered. */
    this.waitingHere = run.waiting === true;
    /** Interrupts answered with a JSON value. @type {Map<string, RunInterrupt>} */
    this.waiting = new Map();
    /** Interrupts in LangChain's human-in-the-loop shape, answered with decisions. @type {Map<string, RunInterrupt>} */
    this.reviews = new Map();
    /** Tool calls decided one by one (the agent's). @type {Set<string>} */
    this.decided = new Set();
    /** Tool names of review actions that name no call, by the id their decisions are recorded under. @type {Map<string, string>} */
    this.actionNames = new Map();
    this.nodes = new RunNodes();
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.stateTimer = undefined;
    this.hooks = hooks;
    this.status = "";
    /** @type {Map<string, ToolLine>} */
    this.tools = new Map();
    /** Calls named in `approval.requested` (for a pause that stored no interrupt values). @type {Map<string, ActionRequest>} */
    this.pending = new Map();
    /** @type {Map<number, { node: HTMLElement, state: HTMLElement, text: HTMLElement }>} */
    this.rounds = new Map();
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.resultsTimer = undefined;
    this.disposed = false;

    this.timeline = byId("timeline");
    this.answer = byId("answer");
    this.answerPanel = byId("answer-panel");
    this.statusBadge = byId("run-status");
    this.stopReason = byId("stop-reason");
    this.runError = byId("run-error");
    this.unknownOutcomes = byId("unknown-outcomes");
    this.unknownOutcomes.hidden = true;
    this.unknownOutcomes.textContent = "";
    this.timeline.replaceChildren();
    this.answer.textContent = "";
    this.answerPanel.hidden = true;
    this.stopReason.textContent = "";
    this.runError.textContent = "";
    byId("run-id").textContent = run.run_id;
    byId("thread-id").textContent = run.thread_id;
    byId("run-view").hidden = false;
    this.approvals = new HitlPanel(byId("approval-list"), byId("approval-panel"), (body) => this.decide(body));
    this.approvals.clear();
    this.interrupts = new InterruptPanel(byId("interrupt-list"), byId("interrupt-panel"), (id, value) => this.resume(id, value));
    this.interrupts.show([]);
    this.folds = new TreeFolds();
    this.stateValues = byId("state-values");
    this.stateValues.replaceChildren();
    this.stateJson = byId("state-json");
    this.stateJson.textContent = "";
    byId("state-panel").hidden = true;
    this.graph = new GraphView(byId("graph-drawing"), byId("graph-caption"));
    byId("graph-caption").textContent = "";
    void this.graph.load(this.graphId);
    this.setStatus(run.status ?? "pending");
    this.loadStateSoon(0);
  }

  /**
   * Goes on with the run that resumes this one's thread: its id and status from now on, its
   * events appended to the same timeline.
   * @param {Record<string, any>} run
   */
  continueWith(run) {
    this.runId = String(run.run_id);
    byId("run-id").textContent = this.runId;
    this.waitingHere = false;
    this.waiting.clear();
    this.reviews.clear();
    this.pending.clear();
    this.nodes.paused = false;
    this.paintNodes();
    this.stopReason.textContent = "";
    append(this.timeline, el("li", { class: "event info", "data-testid": "event", "data-type": "run.continued" }, el("span", { text: `Continued by run ${this.runId}` })));
    this.setStatus(typeof run.status === "string" ? run.status : "pending");
  }

  dispose() {
    this.disposed = true;
    clearTimeout(this.resultsTimer);
    clearTimeout(this.stateTimer);
  }

  /** @param {string} status */
  setStatus(status) {
    const changed = status !== this.status;
    this.status = status;
    if (changed && !this.disposed) this.hooks.onStatus(status);
    this.statusBadge.textContent = status;
    this.statusBadge.dataset["status"] = status;
    byId("cancel-run").hidden = TERMINAL.has(status);
    this.showPending();
  }

  /** Asks the server to cancel the run; the stream then shows how it stopped. */
  async cancel() {
    const button = /** @type {HTMLButtonElement} */ (byId("cancel-run"));
    button.disabled = true;
    try {
      await request("POST", `/runs/${encodeURIComponent(this.runId)}/cancel`);
      this.hooks.onDecided();
    } catch (error) {
      this.runError.textContent = error instanceof Error ? error.message : String(error);
    } finally {
      button.disabled = false;
    }
  }

  /**
   * Applies one event of the run to the view.
   * @param {StreamEvent} event
   */
  apply(event) {
    if (this.disposed) return;
    const data = /** @type {Record<string, any>} */ (event);
    if (this.nodes.apply(data)) this.paintNodes();
    switch (event.type) {
      case "run.created":
        this.line(event, "Run created");
        break;
      case "run.started":
        this.setStatus("running");
        this.line(event, `Started (attempt ${data.attempt ?? "?"})`);
        break;
      case "run.resumed":
        this.setStatus("running");
        this.line(event, `Resumed (${data.reason ?? "?"})`);
        break;
      case "model.started":
        this.round(data.round).state.textContent = "thinking…";
        break;
      case "model.delta": {
        if (typeof data.text === "string") this.round(data.round).text.textContent += data.text;
        break;
      }
      case "model.finished": {
        const round = this.round(data.round);
        const usage = data.usage ?? {};
        round.node.dataset["done"] = "true";
        round.state.textContent =
          `${data.tool_calls ?? 0} tool call(s), ${usage.input_tokens ?? 0}+${usage.output_tokens ?? 0} tokens, ${data.duration_ms ?? "?"} ms`;
        break;
      }
      case "model.failed":
        this.line(event, `Model failed (round ${data.round}): ${data.code}: ${data.message}`, "error");
        break;
      case "tool.call.started": {
        const line = this.tool(data.tool_call_id, data.tool, data.args);
        line.setArgs(data.args);
        line.setStatus("running");
        break;
      }
      case "tool.call.finished": {
        const line = this.tool(data.tool_call_id, data.tool, undefined);
        const note = `${data.duration_ms ?? "?"} ms${data.truncated ? ", truncated" : ""}`;
        if (data.error_code === UNKNOWN_OUTCOME) {
          // it may or may not have taken effect: not a plain failure
          line.setStatus("unknown", `${UNKNOWN_OUTCOME}: it may or may not have taken effect`);
          this.line(event, `Outcome unknown: ${data.tool} (${data.tool_call_id}) may or may not have taken effect`, "warning", "unknown-outcome-event");
        } else line.setStatus(data.ok ? "ok" : "failed", data.ok ? note : `${data.error_code ?? "error"}, ${note}`);
        this.loadResultsSoon();
        break;
      }
      case "approval.requested": {
        const requests = Array.isArray(data.requests) ? data.requests : [];
        for (const request of requests) {
          if (request === null || typeof request !== "object" || typeof request.tool_call_id !== "string") continue;
          this.tool(request.tool_call_id, String(request.name), request.args).setStatus("awaiting", "waiting for approval");
          this.pending.set(request.tool_call_id, request);
        }
        this.line(event, `Approval requested for ${requests.length} call(s): ${requests.map((/** @type {any} */ request) => String(request?.name)).join(", ")}`);
        break;
      }
      case "approval.decided": {
        this.decisionsShown += 1;
        this.decided.add(data.tool_call_id);
        const line = this.tools.get(data.tool_call_id);
        const who = data.by ? ` by ${data.by}` : "";
        const why = data.reason ? `: ${data.reason}` : "";
        if (line !== undefined) line.setStatus(data.decision === "reject" ? "rejected" : "approved", `${data.decision}${who}${why}`);
        // a call LangChain's middleware does not name is decided as `{interrupt id}#{index}`: shown by its tool
        const call = this.actionNames.get(data.tool_call_id) ?? data.tool_call_id;
        this.line(event, `${data.decision}${who} (${call})${why}`);
        this.showPending();
        break;
      }
      case "run.interrupted":
        // the run ends here (success, stop reason interrupt); its thread waits for an answer,
        // which starts a new run
        // an interrupt in LangChain's human-in-the-loop shape is decided in the review panel; any
        // other is answered with a JSON value — whichever graph raised it
        for (const item of Array.isArray(data.interrupts) ? data.interrupts : []) {
          if (item === null || typeof item !== "object" || typeof item.id !== "string") continue;
          const review = reviewRequest(item.value);
          if (review === null) {
            this.waiting.set(item.id, item);
            continue;
          }
          this.reviews.set(item.id, item);
          for (const action of review.actions) if (action.toolCallId === null) this.actionNames.set(`${item.id}#${action.index}`, action.name);
        }
        // a pause stored without its interrupt values (older agent runs): its named calls
        if (this.reviews.size === 0 && this.pending.size > 0) this.reviews.set("approval", { id: "approval", value: { actionRequests: [...this.pending.values()] } });
        this.waitingHere = true;
        this.setStatus("success");
        this.stopReason.textContent = "interrupt";
        this.line(event, interruptedText(this.reviews.size, this.waiting.size));
        this.showPending();
        this.loadResultsSoon();
        this.loadStateSoon();
        this.hooks.onFinished();
        break;
      case "node.finished": {
        const where = Array.isArray(data.ns) && data.ns.length > 0 ? `${data.ns.map((part) => String(part).split(":")[0]).join(" > ")} > ` : "";
        const outcome = data.error ? `failed: ${data.error}` : data.interrupted ? "interrupted" : "finished";
        this.line(event, `Node ${where}${data.node} ${outcome} (${data.duration_ms ?? "?"} ms)`, data.error ? "error" : "info", "node-line");
        this.loadStateSoon();
        break;
      }
      case "custom":
        this.line(event, `Custom: ${prettyJson(data.data)}`, "info", "custom-line");
        break;
      case "resume.given": {
        for (const id of Array.isArray(data.interrupt_ids) ? data.interrupt_ids : []) {
          this.waiting.delete(id);
          this.reviews.delete(id);
        }
        // the run that resumes a thread starts with the resume the waiting run recorded: shown once
        if (typeof data.value_digest === "string" && data.value_digest === this.resumeShown) break;
        this.resumeShown = data.value_digest;
        // the decisions just shown are this resume: no second line for them
        if (this.decisionsShown > 0) {
          this.decisionsShown = 0;
          this.showPending();
          break;
        }
        this.line(event, `Resume given${data.by ? ` by ${data.by}` : ""}${data.reason ? `: ${data.reason}` : ""}`);
        this.showPending();
        break;
      }
      case "run.cancel_requested":
        this.line(event, "Cancel requested");
        break;
      case "run.succeeded":
        this.finish(event, "success", "completed", data.answer);
        break;
      case "run.failed":
        this.finish(event, "error", data.stop_reason, data.answer);
        this.runError.textContent = `${data.code ?? "error"}: ${data.message ?? ""}`;
        break;
      case "run.timeout":
        this.finish(event, "timeout", data.stop_reason ?? "deadline", data.answer);
        break;
      case "run.cancelled":
        this.finish(event, "interrupted", "cancelled", data.answer);
        break;
      default:
        break;
    }
  }

  /**
   * @param {StreamEvent} event
   * @param {string} status
   * @param {unknown} stopReason
   * @param {unknown} answer
   */
  finish(event, status, stopReason, answer) {
    this.pending.clear();
    this.reviews.clear();
    this.waitingHere = false;
    this.setStatus(status);
    if (typeof stopReason === "string") this.stopReason.textContent = stopReason;
    this.waiting.clear();
    this.line(event, `Run ended: ${status}${typeof stopReason === "string" ? ` (${stopReason})` : ""}`, status === "success" ? "ok" : "error");
    this.loadStateSoon();
    if (typeof answer === "string" && answer !== "") this.showAnswer(answer);
    this.loadResultsSoon();
    this.hooks.onFinished();
  }

  /**
   * Fills in what the events do not carry, from the run record (answer, stop reason, error).
   * @param {Record<string, any>} run
   */
  applyRecord(run) {
    if (run.waiting === false && this.waitingHere) {
      // a newer run answered what this one stopped at
      this.waitingHere = false;
      this.nodes.paused = false;
      this.paintNodes();
      this.showPending();
    }
    if (typeof run.graph_id === "string" && run.graph_id !== this.graphId) {
      this.graphId = run.graph_id;
      void this.graph.load(this.graphId);
    }
    if (typeof run.status === "string" && (TERMINAL.has(run.status) || this.status === "")) this.setStatus(run.status);
    if (typeof run.stop_reason === "string") this.stopReason.textContent = run.stop_reason;
    if (typeof run.answer === "string" && run.answer !== "" && this.answerPanel.hidden) this.showAnswer(run.answer);
    if (run.error && typeof run.error === "object") this.runError.textContent = `${run.error.code}: ${run.error.message}`;
    const unknown = Array.isArray(run.unknown_outcomes) ? run.unknown_outcomes : [];
    this.unknownOutcomes.hidden = unknown.length === 0;
    this.unknownOutcomes.textContent =
      unknown.length === 0
        ? ""
        : `Outcome unknown: ${unknown.map((/** @type {any} */ call) => `${String(call?.tool)} (${String(call?.tool_call_id)})`).join(", ")} may or may not have taken effect.`;
  }

  /** @param {string} text */
  showAnswer(text) {
    this.answer.textContent = text;
    this.answerPanel.hidden = false;
  }

  isTerminal() {
    return TERMINAL.has(this.status);
  }

  showPending() {
    if (this.approvals === undefined) return;
    this.approvals.show(this.waitingHere ? [...this.reviews.values()] : [], this.decided);
    this.interrupts?.show(this.waitingHere ? [...this.waiting.values()] : []);
  }

  /** Paints where the run is on the graph's drawing. */
  paintNodes() {
    this.graph?.highlight(this.nodes.states());
  }

  /**
   * Resumes one interrupt of a user graph's run with a JSON value (LangGraph's `command.resume`,
   * keyed by the interrupt id): once every interrupt has its value, a new run resumes the thread
   * and the page follows it.
   * @param {string} interruptId
   * @param {unknown} value
   */
  async resume(interruptId, value) {
    const next = await request("POST", `/threads/${encodeURIComponent(this.threadId)}/runs`, { assistant_id: this.graphId, command: { resume: { [interruptId]: value } } });
    this.waiting.delete(interruptId);
    this.showPending();
    this.followNext(next);
  }

  /**
   * After an answer: the run that resumes the thread (a new run) is shown, or — while something
   * is still unanswered — this one stays.
   * @param {unknown} next  the run the answer returned
   */
  followNext(next) {
    const id = next !== null && typeof next === "object" ? /** @type {Record<string, unknown>} */ (next)["run_id"] : undefined;
    if (typeof id === "string" && id !== this.runId) this.hooks.onResumed(id);
    else this.hooks.onDecided();
  }

  /** Reads the thread's current values (a user graph's state) shortly, once for a burst of events. */
  loadStateSoon(delayMs = 200) {
    clearTimeout(this.stateTimer);
    this.stateTimer = setTimeout(() => void this.loadState(), delayMs);
  }

  async loadState() {
    if (this.disposed) return;
    let state;
    try {
      state = await request("GET", `/threads/${encodeURIComponent(this.threadId)}/state`);
    } catch (error) {
      // a thread with no state yet says nothing; one whose graph cannot be built says why
      if (this.disposed || !(error instanceof ApiError) || error.status === 404 || error.status === 0 || error.status === 401 || error.status === 403) return;
      this.stateValues.replaceChildren(el("p", { class: "error", "data-testid": "state-error", text: `The state cannot be read: ${error.message}` }));
      this.stateJson.textContent = "";
      byId("state-panel").hidden = false;
      return;
    }
    if (this.disposed) return;
    const values = state?.values ?? null;
    this.stateValues.replaceChildren(jsonTree(values, { folds: this.folds, testId: "state-tree" }));
    this.stateJson.textContent = prettyJson(values);
    byId("state-panel").hidden = false;
    this.nodes.setNext(state?.next);
    this.paintNodes();
  }

  /**
   * Sends decisions on the waiting review (CONTRACT section 5): those naming their call are
   * settled at once; the run that resumes the thread, once all are decided, is followed.
   * @param {{ decisions: Record<string, unknown>[] }} body
   */
  async decide(body) {
    const next = await request("POST", `/runs/${encodeURIComponent(this.runId)}/decisions`, body);
    for (const decision of body.decisions) if (typeof decision["tool_call_id"] === "string") this.decided.add(decision["tool_call_id"]);
    this.showPending();
    this.followNext(next);
  }

  /**
   * @param {StreamEvent} event
   * @param {string} text
   * @param {string} [kind]
   * @param {string} [testId]
   */
  line(event, text, kind = "info", testId = "event") {
    append(
      this.timeline,
      el("li", { class: `event ${kind}`, "data-testid": testId, "data-type": event.type }, el("time", { text: timeOf(/** @type {string} */ (event["at"])) }), " ", el("span", { text })),
    );
  }

  /**
   * The timeline entry of a model round (created on first use): its state line and streamed text.
   * @param {unknown} round
   * @returns {{ node: HTMLElement, state: HTMLElement, text: HTMLElement }}
   */
  round(round) {
    const key = typeof round === "number" ? round : 0;
    let entry = this.rounds.get(key);
    if (entry === undefined) {
      const state = el("span", { class: "round-state" });
      const text = el("div", { class: "round-text", "data-testid": "model-text" });
      const node = el("li", { class: "event round", "data-testid": "model-round", "data-round": String(key) }, el("span", { class: "round-title", text: `Model round ${key}: ` }), state, text);
      entry = { node, state, text };
      this.rounds.set(key, entry);
      append(this.timeline, node);
    }
    return entry;
  }

  /**
   * @param {string} toolCallId
   * @param {string} name
   * @param {unknown} args
   * @returns {ToolLine}
   */
  tool(toolCallId, name, args) {
    let line = this.tools.get(toolCallId);
    if (line === undefined) {
      line = new ToolLine({ toolCallId, tool: name, args: args ?? {}, onOpen: () => this.loadResultsSoon(0) });
      this.tools.set(toolCallId, line);
      append(this.timeline, line.node);
    }
    return line;
  }

  /** Reads tool results (ToolMessages) from the thread's state, shortly, once for a burst of events. */
  loadResultsSoon(delayMs = 200) {
    clearTimeout(this.resultsTimer);
    this.resultsTimer = setTimeout(() => void this.loadResults(), delayMs);
  }

  async loadResults() {
    if (this.disposed || [...this.tools.values()].every((line) => line.hasResult)) return;
    let state;
    try {
      state = await request("GET", `/threads/${encodeURIComponent(this.threadId)}/state`);
    } catch {
      return;
    }
    const messages = Array.isArray(state?.values?.messages) ? state.values.messages : [];
    for (const message of messages) {
      const tool = toolMessage(message);
      if (tool === null) continue;
      this.tools.get(tool.toolCallId)?.setResult(tool.content);
    }
  }
}

/**
 * Reads a ToolMessage in any of the shapes the API may use: `{type: "tool", ...}`,
 * `{role: "tool", ...}`, or LangChain's serialised `{lc, id: [..., "ToolMessage"], kwargs}`.
 * @param {any} message
 * @returns {{ toolCallId: string, content: string } | null}
 */
function toolMessage(message) {
  if (message === null || typeof message !== "object") return null;
  const body = message.lc !== undefined && message.kwargs !== undefined ? message.kwargs : message;
  const isTool = message.type === "tool" || message.role === "tool" || (Array.isArray(message.id) && message.id.at(-1) === "ToolMessage");
  if (!isTool || typeof body.tool_call_id !== "string") return null;
  const content = typeof body.content === "string" ? body.content : JSON.stringify(body.content);
  return { toolCallId: body.tool_call_id, content };
}

/**
 * The timeline's line for a pause: what waits for an answer.
 * @param {number} reviews
 * @param {number} values
 */
function interruptedText(reviews, values) {
  const parts = [];
  if (reviews > 0) parts.push(`${reviews} review(s) waiting for decisions`);
  if (values > 0) parts.push(`${values} interrupt(s) waiting for a value`);
  return parts.length === 0 ? "Interrupted" : `Interrupted: ${parts.join(", ")}`;
}
