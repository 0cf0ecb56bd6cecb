import { CLI_DEFAULTS } from "../constants.js";
import { isKnownRunEvent } from "../runtime/events/run-events.js";
import type { ForeignRunEvent, LiveEvent } from "../runtime/runtime.js";
import { foldArgs } from "./fold.js";

type ToolCallFinished = Extract<LiveEvent, { type: "tool.call.finished" }>;
type ApprovalDecided = Extract<LiveEvent, { type: "approval.decided" }>;

/**
 * An event of a known type as the timeline sees it: a live one, or a stored one (with its
 * envelope, of which `at` is shown). The CLI may add what the event lacks: the `args` of a call
 * that never started (looked up in the thread's messages), the `tool` of a decision it just made.
 */
export type KnownTimelineEvent = (
  | Exclude<LiveEvent, ToolCallFinished | ApprovalDecided>
  | (ToolCallFinished & { args?: unknown })
  | (ApprovalDecided & { tool?: string })
) & { at?: string };

/** An event as the timeline sees it: a known one, or a stored one of a type a newer version wrote (named under --verbose). */
export type TimelineEvent = KnownTimelineEvent | ForeignRunEvent;

/** How a timeline prints. */
export interface TimelineOptions {
  /** A terminal: a spinner while the model thinks or a tool runs, the answer streamed token by token. */
  tty: boolean;
  /** Also print each call's full arguments, model usage per round, workers and attempts. */
  verbose: boolean;
  /** Where the text goes (stdout). */
  write: (text: string) => void;
}

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/**
 * Renders a run's events for a person: one folded line per tool call (`✓ add(a=1, b=2)  3 ms`:
 * the agent's step events, or any graph's LangChain tools from LangGraph's `tools` stream),
 * the approval asked and decided, the model's text, and how the run ended. Fed live (by
 * `runtime.runs.subscribe`, so `model.delta` streams the answer) or with stored events (`show`,
 * `events`, the demo's replay), where the text comes from `run.succeeded`'s answer instead.
 * On a terminal a spinner shows what is under way; elsewhere only whole lines are printed.
 */
export class Timeline {
  private readonly calls = new Map<string, { tool: string; args: unknown }>();
  private spinnerText: string | null = null;
  private spinnerTimer: NodeJS.Timeout | undefined;
  private frame = 0;
  /** Text of the current model round (streamed on a terminal, buffered otherwise). */
  private roundText = "";
  private streaming = false;
  /** The last model text shown, so the final answer is not printed twice. */
  private shownText = "";
  /** The last model error shown, so `run.failed` does not print the same message again. */
  private modelError = "";
  /** Approval requests shown since the last decision: then `run.interrupted` adds nothing. */
  private requestsShown = 0;
  /** Decisions shown since the last resume: the resume they make says nothing more. */
  private decisionsShown = 0;
  /** Node lines are shown (a graph whose nodes report their steps is shown by those instead). */
  private nodes = true;
  /** LangChain tools under way (LangGraph's `tools` stream), by tool call id: folded into one line when they end. */
  private readonly toolRuns = new Map<string, { name: string; args: unknown; startedAt: number }>();

  constructor(private readonly options: TimelineOptions) {}

  /**
   * Shows the run node by node (the default) or, for a graph whose nodes report their steps
   * (`runtime.graphs.reportsSteps`, the agent's model rounds and tool calls), by those steps alone.
   */
  showNodes(nodes: boolean): void {
    this.nodes = nodes;
  }

  /** Prints a line of its own (the spinner, if any, is cleared first and comes back after). */
  line(text: string): void {
    this.clearSpinner();
    this.endStream();
    this.options.write(`${text}\n`);
    this.drawSpinner();
  }

  /** Stops the spinner for good (call before printing anything else or exiting). */
  stop(): void {
    this.endStream();
    this.setSpinner(null);
  }

  /** Shows one event. Unknown types are ignored (verbose mode names them). */
  event(event: TimelineEvent): void {
    const verbose = this.options.verbose;
    if (!isKnownRunEvent(event)) {
      if (verbose) this.line(`· ${event.type}`);
      return;
    }
    switch (event.type) {
      case "run.created":
        if (verbose) this.line(`· created${at(event)}`);
        return;
      case "run.started":
        this.line(`▶ started in ${processOf(event.worker)}${verbose ? ` (attempt ${event.attempt}, ${event.worker})` : ""}${at(event)}`);
        return;
      case "run.resumed":
        this.line(`↻ resumed (${event.reason}) in ${processOf(event.worker)}${verbose ? ` (attempt ${event.attempt}, ${event.worker})` : ""}${at(event)}`);
        return;
      case "model.started":
        this.roundText = "";
        if (verbose && !this.options.tty) this.line(`· model round ${event.round}`);
        this.setSpinner(`thinking (model round ${event.round})`);
        return;
      case "model.delta":
        this.delta(event.text);
        return;
      case "model.finished":
        this.modelFinished(event);
        return;
      case "model.failed":
        this.modelError = event.message;
        this.line(`✗ model failed [${event.code}] ${oneLine(this.modelError, CLI_DEFAULTS.errorLineChars)}${event.will_retry ? " (retrying)" : ""}`);
        return;
      case "tool.call.started":
        this.calls.set(event.tool_call_id, { tool: event.tool, args: event.args });
        this.setSpinner(`running ${event.tool}(${foldArgs(event.args, CLI_DEFAULTS.foldedArgsChars)})`);
        return;
      case "tool.call.finished":
        this.toolFinished(event);
        return;
      case "approval.requested":
        this.setSpinner(null);
        for (const request of event.requests) {
          const r = request as { name?: unknown; args?: unknown; tool_call_id?: unknown; risk?: unknown };
          this.calls.set(String(r.tool_call_id), { tool: String(r.name), args: r.args });
          // a user graph's HITL request (LangChain's middleware) has neither a risk nor a call id
          const risk = r.risk === undefined ? "" : ` (risk ${String(r.risk)})`;
          const call = r.tool_call_id === undefined ? "" : `  [call ${String(r.tool_call_id)}]`;
          this.line(`⏸ ${String(r.name)}(${foldArgs(r.args, CLI_DEFAULTS.foldedArgsChars)}) needs approval${risk}${call}`);
          this.requestsShown += 1;
        }
        return;
      case "approval.decided":
        this.decided(event);
        return;
      case "run.interrupted":
        this.setSpinner(null);
        {
          // a graph's own interrupt() values (not approval requests) are shown as they are
          const values = (event.interrupts ?? []).filter((item) => (item.value as { actionRequests?: unknown } | null)?.actionRequests === undefined);
          for (const item of values) this.line(`⏸ waiting for a value: ${foldArgs(item.value, CLI_DEFAULTS.foldedArgsChars)}${verbose ? `  [interrupt ${item.id}]` : ""}`);
          // the requests just shown already say the run waits; say it only when they were not
          if (values.length === 0 && this.requestsShown === 0) this.line("⏸ waiting for approval");
        }
        return;
      case "node.started":
        if (this.nodes) this.setSpinner(`running ${event.node}`);
        return;
      case "node.finished":
        if (!this.nodes) return;
        this.setSpinner(null);
        {
          const ns = event.ns.length > 0 ? ` in ${event.ns.map((part) => part.split(":")[0]).join("/")}` : "";
          const mark = event.error !== null ? "✗" : event.interrupted ? "⏸" : "●";
          this.line(`${mark} ${event.node}${ns}  ${event.duration_ms ?? "?"} ms${event.error !== null ? `  ${oneLine(event.error, CLI_DEFAULTS.errorLineChars)}` : ""}`);
        }
        return;
      case "custom":
        if (verbose) this.line(`· ${foldArgs(event.data, CLI_DEFAULTS.foldedArgsChars)}`);
        return;
      case "tools":
        this.toolEvent(event);
        return;
      case "resume.given":
        // decisions just shown are what this resume gives the graph
        if (this.decisionsShown > 0) {
          this.decisionsShown = 0;
          return;
        }
        this.line(`↪ resumed by ${event.by}${event.reason !== null ? `: ${oneLine(event.reason, CLI_DEFAULTS.errorLineChars)}` : ""}`);
        return;
      case "run.cancel_requested":
        this.line("■ cancel requested");
        return;
      case "run.succeeded":
        this.setSpinner(null);
        this.answer(event.answer);
        this.line("✓ succeeded");
        return;
      case "run.failed":
        this.setSpinner(null);
        {
          const message = event.message !== null && event.message !== this.modelError ? ` ${oneLine(event.message, CLI_DEFAULTS.errorLineChars)}` : "";
          this.line(`✗ failed: ${event.stop_reason}${event.code ? ` [${event.code}]` : ""}${message}`);
        }
        return;
      case "run.timeout":
        this.setSpinner(null);
        this.line("✗ timed out (the run's deadline passed)");
        return;
      case "run.cancelled":
        this.setSpinner(null);
        this.line("■ cancelled");
        return;
      case "graph.stopped":
        if (verbose) this.line(`· ${event.type}`);
    }
  }

  private delta(text: string): void {
    if (text === "") return;
    this.roundText += text;
    if (!this.options.tty) return;
    this.clearSpinner();
    if (this.spinnerText !== null) this.setSpinner(null);
    this.streaming = true;
    this.options.write(text);
  }

  private modelFinished(event: Extract<KnownTimelineEvent, { type: "model.finished" }>): void {
    this.setSpinner(null);
    const text = this.roundText.trim();
    if (this.streaming) {
      this.endStream();
      this.shownText = text;
    } else if (text !== "") {
      this.line(text);
      this.shownText = text;
    }
    this.roundText = "";
    if (this.options.verbose) {
      const usage: Partial<typeof event.usage> = event.usage ?? {};
      this.line(
        `· model round ${event.round}: ${event.finish_reason ?? "?"}, ${event.tool_calls} tool call(s), ` +
          `${usage.input_tokens ?? 0} in / ${usage.output_tokens ?? 0} out tokens, ${event.duration_ms} ms`,
      );
    }
  }

  private toolFinished(event: ToolCallFinished & { args?: unknown }): void {
    this.setSpinner(null);
    // a call that never started (refused, rejected, unparsable) has its arguments on the event, if the caller looked them up
    const call = this.calls.get(event.tool_call_id) ?? { tool: event.tool, args: event.args };
    const status = event.ok ? "✓" : "✗";
    const code = event.ok ? "" : `  ${event.error_code ?? "failed"}`;
    const truncated = event.truncated ? "  (output truncated)" : "";
    this.line(`${status} ${call.tool}(${foldArgs(call.args, CLI_DEFAULTS.foldedArgsChars)})${code}  ${event.duration_ms} ms${truncated}`);
    if (this.options.verbose && call.args !== undefined) this.line(`    args ${JSON.stringify(call.args)}`);
  }

  /**
   * A LangChain tool a graph's node ran (LangGraph's `tools` stream: `on_tool_start`, then
   * `on_tool_end` or `on_tool_error`, by tool call id): one folded line when it ends, as the
   * agent's tool calls are shown (`✓ search(query="x")  12 ms`). The time is the end event's
   * `duration_ms`, else the time between the events' `at` (live: when they arrived).
   */
  private toolEvent(event: Extract<KnownTimelineEvent, { type: "tools" }>): void {
    const data = event.data as { event?: unknown; toolCallId?: unknown; name?: unknown; input?: unknown; output?: unknown; error?: unknown } | null;
    if (data === null || typeof data !== "object") return;
    const name = typeof data.name === "string" ? data.name : "tool";
    const key = typeof data.toolCallId === "string" ? data.toolCallId : `${event.ns.join("|")}:${name}`;
    // a call the graph also reported as its own step (tool.call.*) is shown once, by that step
    if (this.calls.has(key)) return;
    const now = event.at !== undefined ? Date.parse(event.at) : Date.now();
    if (data.event === "on_tool_start") {
      const args = toolInput(data.input);
      this.toolRuns.set(key, { name, args, startedAt: now });
      this.setSpinner(`running ${name}(${foldArgs(args, CLI_DEFAULTS.foldedArgsChars)})`);
      return;
    }
    if (data.event !== "on_tool_end" && data.event !== "on_tool_error") return;
    const started = this.toolRuns.get(key);
    this.toolRuns.delete(key);
    this.setSpinner(null);
    const ok = data.event === "on_tool_end";
    const args = started?.args;
    const error = ok ? "" : `  ${oneLine(typeof data.error === "string" ? data.error : (JSON.stringify(data.error) ?? "failed"), CLI_DEFAULTS.toolErrorChars)}`;
    const took = event.duration_ms !== undefined ? String(event.duration_ms) : started === undefined || Number.isNaN(now - started.startedAt) ? "?" : String(Math.max(0, now - started.startedAt));
    this.line(`${ok ? "✓" : "✗"} ${name}(${foldArgs(args, CLI_DEFAULTS.foldedArgsChars)})${error}  ${took} ms`);
    if (!this.options.verbose) return;
    if (args !== undefined) this.line(`    args ${JSON.stringify(args)}`);
    if (ok && data.output !== undefined && data.output !== null) this.result(name, toolOutputText(data.output));
  }

  /** Prints a tool's result (what the model saw) under its call line, cut to CLI_DEFAULTS.verboseResultChars. */
  result(tool: string, text: string): void {
    const flat = text.replace(/\s+/g, " ").trim();
    const max = CLI_DEFAULTS.verboseResultChars;
    this.line(`    ${tool} result ${flat.length > max ? `${flat.slice(0, max - 1)}…` : flat}`);
  }

  private decided(event: ApprovalDecided & { tool?: string }): void {
    this.requestsShown = 0;
    this.decisionsShown += 1;
    const call = this.calls.get(event.tool_call_id);
    const what = call?.tool ?? event.tool ?? event.tool_call_id;
    const by = event.by ? ` by ${event.by}` : "";
    const reason = event.reason ? `: ${oneLine(event.reason)}` : "";
    const mark = event.decision === "reject" ? "✗ rejected" : event.decision === "edit" ? "✎ edited and approved" : "✓ approved";
    this.line(`${mark} ${what}${by}${reason}`);
  }

  private answer(answer: unknown): void {
    if (typeof answer !== "string" || answer.trim() === "" || answer.trim() === this.shownText) return;
    this.line(answer.trim());
    this.shownText = answer.trim();
  }

  private endStream(): void {
    if (!this.streaming) return;
    this.streaming = false;
    this.options.write("\n");
  }

  private setSpinner(text: string | null): void {
    if (!this.options.tty) return;
    this.clearSpinner();
    this.spinnerText = text;
    if (text === null) {
      clearInterval(this.spinnerTimer);
      this.spinnerTimer = undefined;
      return;
    }
    this.drawSpinner();
    this.spinnerTimer ??= setInterval(() => {
      this.frame += 1;
      this.clearSpinner();
      this.drawSpinner();
    }, CLI_DEFAULTS.spinnerMs);
    this.spinnerTimer.unref();
  }

  private drawSpinner(): void {
    if (!this.options.tty || this.spinnerText === null || this.streaming) return;
    this.options.write(`${SPINNER[this.frame % SPINNER.length]} ${this.spinnerText}`);
  }

  private clearSpinner(): void {
    if (this.options.tty && this.spinnerText !== null && !this.streaming) this.options.write("\r\x1b[2K");
  }
}

function at(event: { at?: string }): string {
  return event.at !== undefined ? `  ${event.at.slice(11, 19)}` : "";
}

/** "process 1234" from a worker id `host:pid:tag[:worker:slot]`. */
function processOf(worker: unknown): string {
  const pid = typeof worker === "string" ? worker.split(":")[1] : undefined;
  return pid !== undefined && /^\d+$/.test(pid) ? `process ${pid}` : "a process";
}

/** A tool's input as LangChain reports it (the arguments as JSON text): the arguments, or the text itself when it is not JSON. */
function toolInput(input: unknown): unknown {
  if (typeof input !== "string") return input;
  try {
    return JSON.parse(input) as unknown;
  } catch {
    return input;
  }
}

/** A tool's output as text: a tool message's content, a string as it is, anything else as JSON. */
function toolOutputText(output: unknown): string {
  const content = (output as { content?: unknown } | null)?.content;
  const value = typeof output === "object" && output !== null && content !== undefined ? content : output;
  return typeof value === "string" ? value : (JSON.stringify(value) ?? "");
}

/** Text on one line, cut to `max` characters at a space (never inside a word or a URL). */
export function oneLine(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  const space = flat.lastIndexOf(" ", max - 1);
  return `${flat.slice(0, space > max / 2 ? space : max - 1)}…`;
}
