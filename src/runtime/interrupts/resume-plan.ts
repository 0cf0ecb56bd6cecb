import { DevmindError, RunConflictError } from "../../errors.js";
import { isHitlRequest, planHitlResume } from "./hitl-decisions.js";
import type { ResumeCommand } from "./resume-store.js";
import type { RunInterrupt } from "../queue/run-record.js";

/**
 * How a caller resumes an interrupted run of any graph: one `value` (when one interrupt waits),
 * `values` keyed by interrupt id, or a LangGraph-style `command` whose `resume` is either.
 * `update` and `goto` are a Command's, applied with the resume.
 */
export type ResumeBody =
  | { value: unknown }
  | { values: Record<string, unknown> }
  | { command: { resume?: unknown; update?: unknown; goto?: unknown } };

function fail(message: string, details: Record<string, unknown> = {}): DevmindError {
  return new DevmindError("RUN_INPUT_INVALID", message, { details });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Checks a resume against the interrupts still waiting (those not answered by an earlier resume)
 * and returns what to store: the interrupt ids it answers and the command. A value for an
 * interrupt that is not waiting is a conflict; one value while several wait is refused (name
 * them by id); a value for a HITL-shaped interrupt is validated as decisions (`planHitlResume`).
 */
export function planResume(body: unknown, waiting: readonly RunInterrupt[]): { interruptIds: string[]; command: ResumeCommand } {
  if (!isRecord(body)) throw fail('expected { "value": ... }, { "values": { interruptId: value } } or { "command": { "resume", "update", "goto" } }');
  const known = Object.keys(body).filter((key) => key !== "value" && key !== "values" && key !== "command");
  if (known.length > 0) throw fail(`unknown field ${known[0]}: expected value, values or command`, { field: known[0] });
  const forms = ["value", "values", "command"].filter((key) => key in body);
  if (forms.length !== 1) throw fail("give exactly one of value, values or command");
  let resume: unknown;
  let update: unknown;
  let goto: unknown;
  let keyed = false;
  if ("command" in body) {
    const command = body["command"];
    if (!isRecord(command)) throw fail("command must be an object { resume?, update?, goto? }");
    const extra = Object.keys(command).filter((key) => !["resume", "update", "goto"].includes(key));
    if (extra.length > 0) throw fail(`command.${extra[0]} is not supported: resume, update and goto are`, { field: `command.${extra[0]}` });
    if (command["resume"] === undefined && command["update"] === undefined && command["goto"] === undefined) throw fail("command needs resume, update or goto");
    resume = command["resume"];
    update = command["update"];
    goto = command["goto"];
    keyed = isRecord(resume) && Object.keys(resume).length > 0 && Object.keys(resume).every((id) => waiting.some((item) => item.id === id));
  } else if ("values" in body) {
    resume = body["values"];
    if (!isRecord(resume) || Object.keys(resume).length === 0) throw fail("values must map interrupt ids to values (at least one)");
    keyed = true;
  } else {
    resume = body["value"];
  }
  const values: Record<string, unknown> = {};
  if (keyed) {
    for (const [id, value] of Object.entries(resume as Record<string, unknown>)) {
      if (!waiting.some((item) => item.id === id)) throw new RunConflictError(`no interrupt ${JSON.stringify(id.slice(0, 100))} is waiting on this run`, { interruptId: id.slice(0, 100) });
      values[id] = value;
    }
  } else if (resume !== undefined) {
    if (waiting.length === 0) throw new RunConflictError("no interrupt of this run is waiting for a value");
    if (waiting.length > 1) {
      throw fail(`${waiting.length} interrupts are waiting: give { "values": { interruptId: value } } naming them (${waiting.map((item) => item.id).join(", ")})`, {
        waiting: waiting.map((item) => item.id),
      });
    }
    values[(waiting[0] as RunInterrupt).id] = resume;
  }
  for (const [id, value] of Object.entries(values)) {
    const target = waiting.find((item) => item.id === id) as RunInterrupt;
    if (isHitlRequest(target.value)) values[id] = planHitlResume(value, target.value);
  }
  const command: ResumeCommand = { values, ...(update === undefined ? {} : { update }), ...(goto === undefined ? {} : { goto }) };
  return { interruptIds: Object.keys(values), command };
}

/**
 * The value of a resume that answers exactly one waiting HITL request and nothing else (no
 * `update` or `goto`): `{ value }`, `{ values: { id: value } }` or `{ command: { resume } }` with
 * one HITL interrupt waiting or named. Such a value is that request's decisions, which the
 * runtime validates and audits one by one (`runs.decide`); undefined for any other resume.
 */
export function hitlResumeValue(body: unknown, waiting: readonly RunInterrupt[]): unknown {
  if (!isRecord(body)) return undefined;
  const hitl = waiting.filter((item) => isHitlRequest(item.value));
  if (hitl.length === 0) return undefined;
  const single = (resume: unknown): unknown => {
    if (isRecord(resume) && Object.keys(resume).length === 1) {
      const [id] = Object.keys(resume) as [string];
      if (hitl.some((item) => item.id === id)) return resume[id];
      if (waiting.some((item) => item.id === id)) return undefined;
    }
    return waiting.length === 1 ? resume : undefined;
  };
  if ("command" in body && Object.keys(body).length === 1 && isRecord(body["command"])) {
    const command = body["command"];
    if (Object.keys(command).length !== 1 || command["resume"] === undefined) return undefined;
    return single(command["resume"]);
  }
  if ("values" in body && Object.keys(body).length === 1 && isRecord(body["values"]) && Object.keys(body["values"]).length === 1) return single(body["values"]);
  if ("value" in body && Object.keys(body).length === 1) return waiting.length === 1 ? body["value"] : undefined;
  return undefined;
}
