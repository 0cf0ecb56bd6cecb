// devmind web page: start a run (the agent with a task, any other graph with a JSON input), pick
// one from the list, watch it live, decide approvals, resume interrupts.
// Plain ES modules served from /assets/ (no build step, no framework, same origin only).

import { ApiError, authHeaders, apiKey, errorOf, request, setApiKey, setUnauthorizedHandler } from "./api.js";
import { append, byId, el } from "./dom.js";
import { runLabel } from "./run-label.js";
import { runListItem } from "./run-list.js";
import { RunView } from "./run-view.js";
import { followEvents } from "./sse.js";
import { watchDevStatus } from "./dev-status.js";
import { inputForm } from "./input-form.js";
import { InputFormView } from "./input-form-view.js";

const RUNS_SHOWN = 30;
/** While a shown run's thread waits on it: how often to look for the run that resumes it (answered elsewhere), and for how long. */
const RESUME_WATCH = { everyMs: 2_000, forMs: 30 * 60_000 };
const RUNS_REFRESH_MS = 5_000;
const THREADS_SCANNED = 10;

/** Tasks of the runs started from this tab, for the list when the server's records omit the input. @type {Map<string, string>} */
const startedTasks = new Map();

/** @type {RunView | null} */
let view = null;
/** @type {ReturnType<typeof followEvents> | null} */
let stream = null;

const keyForm = /** @type {HTMLFormElement} */ (byId("key-form"));
const keyInput = /** @type {HTMLInputElement} */ (byId("api-key"));
const keyNote = byId("key-note");
const taskForm = /** @type {HTMLFormElement} */ (byId("task-form"));
const sameThread = /** @type {HTMLInputElement} */ (byId("same-thread"));
const formError = byId("form-error");
const runButton = /** @type {HTMLButtonElement} */ (byId("run-button"));
const graphRow = byId("graph-row");
const graphPicker = /** @type {HTMLSelectElement} */ (byId("graph"));
/** The server's default assistant (runs without an assistant_id), until its graph list is read. */
const DEFAULT_GRAPH = "agent";
/** A conversation's form: what the page shows before (or without) a graph's schema. */
const CHAT_FORM = inputForm({ properties: { messages: {} } });
/** The start form of each graph, from its input schema (`inputForm`). @type {Map<string, import("./input-form.js").InputForm>} */
const forms = new Map([[DEFAULT_GRAPH, CHAT_FORM]]);
const formView = new InputFormView(byId("input-fields"));
formView.show(CHAT_FORM);
/** The graph the picker starts on: the server's first (its default assistant's graph). */
let firstGraph = DEFAULT_GRAPH;
const runsList = byId("runs-list");
const runsError = byId("runs-error");
const connection = byId("connection");

setUnauthorizedHandler(() => {
  keyForm.hidden = false;
  keyNote.textContent = apiKey() === null ? "This server needs an API key." : "The server refused this API key.";
  keyInput.focus();
});

keyForm.addEventListener("submit", (event) => {
  event.preventDefault();
  setApiKey(keyInput.value.trim());
  keyInput.value = "";
  keyNote.textContent = apiKey() === null ? "Key cleared." : "Key kept for this tab.";
  void loadGraphs();
  void refreshRuns();
  const selected = selectedRunId();
  if (selected !== null) void selectRun(selected);
});

taskForm.addEventListener("submit", (event) => {
  event.preventDefault();
  void startRun();
});

byId("refresh-runs").addEventListener("click", () => void refreshRuns());
graphPicker.addEventListener("change", () => showGraphInput());

/** The graph runs start with: the picker's choice, else the server's first. @returns {string} */
function selectedGraph() {
  return graphPicker.value === "" ? firstGraph : graphPicker.value;
}

/** Shows the selected graph's start form, built from its input schema. */
function showGraphInput() {
  const form = forms.get(selectedGraph()) ?? inputForm(null);
  if (formView.form !== form) formView.show(form);
}

/**
 * An assistant's start form, from its input schema; the whole-input JSON editor when the schema
 * cannot be read (a graph that fails to build) or names no fields.
 * @param {string} assistantId
 * @returns {Promise<import("./input-form.js").InputForm>}
 */
async function formOf(assistantId) {
  try {
    const schemas = await request("GET", `/assistants/${encodeURIComponent(assistantId)}/schemas`);
    return inputForm(schemas?.input_schema);
  } catch {
    return inputForm(null);
  }
}

/** Fills the graph picker from the server's assistants (one per loaded graph); shown when it is not the agent alone. */
async function loadGraphs() {
  let assistants;
  try {
    assistants = await request("POST", "/assistants/search", { limit: 100 });
  } catch {
    return;
  }
  // one entry per graph (several assistants may share one)
  const list = Array.isArray(assistants) ? assistants : [];
  const ids = [...new Set(list.map((/** @type {Record<string, any>} */ a) => String(a.graph_id)))];
  // one schema read per graph: its start form
  const read = await Promise.all(ids.map((id) => formOf(String(list.find((/** @type {Record<string, any>} */ a) => String(a.graph_id) === id)?.assistant_id ?? id))));
  forms.clear();
  ids.forEach((id, index) => forms.set(id, /** @type {import("./input-form.js").InputForm} */ (read[index])));
  firstGraph = ids.includes(DEFAULT_GRAPH) ? DEFAULT_GRAPH : (ids[0] ?? DEFAULT_GRAPH);
  const current = graphPicker.value;
  graphPicker.replaceChildren(...ids.map((id) => el("option", { value: id, text: id })));
  graphPicker.value = ids.includes(current) ? current : firstGraph;
  graphRow.hidden = ids.length <= 1;
  showGraphInput();
}
byId("cancel-run").addEventListener("click", () => void view?.cancel());
window.addEventListener("hashchange", () => {
  const id = selectedRunId();
  if (id !== null && id !== view?.runId) void selectRun(id);
});

/** The run named in the page's address (`#run=ID`), or null. @returns {string | null} */
function selectedRunId() {
  const match = /^#run=([^&]+)$/.exec(window.location.hash);
  return match === null ? null : decodeURIComponent(match[1] ?? "");
}

/** Creates a thread (or reuses the selected run's) and a run on it, then shows it. */
async function startRun() {
  formError.textContent = "";
  const graph = selectedGraph();
  const { input, errors } = formView.read();
  if (errors.length > 0) {
    formError.textContent = errors.map((error) => error.message).join(" ");
    return;
  }
  const messages = /** @type {Record<string, any> | null} */ (input)?.messages;
  const content = Array.isArray(messages) && typeof messages[0]?.content === "string" ? messages[0].content : null;
  runButton.disabled = true;
  try {
    const threadId = sameThread.checked && view !== null ? view.threadId : (await request("POST", "/threads", {})).thread_id;
    const run = await request("POST", `/threads/${encodeURIComponent(threadId)}/runs`, { assistant_id: graph, input });
    formView.clear();
    if (content !== null) startedTasks.set(String(run.run_id), content);
    await selectRun(run.run_id, run);
    void refreshRuns();
  } catch (error) {
    formError.textContent = describe(error);
  } finally {
    runButton.disabled = false;
  }
}

/**
 * Shows a run: its record, then its events from the start, live until it ends.
 * @param {string} runId
 * @param {{ run_id: string, thread_id: string, status?: string }} [known]
 */
async function selectRun(runId, known) {
  stream?.stop();
  stream = null;
  view?.dispose();
  view = null;
  if (window.location.hash !== `#run=${encodeURIComponent(runId)}`) history.replaceState(null, "", `#run=${encodeURIComponent(runId)}`);
  markSelected(runId);
  let record;
  try {
    record = await request("GET", `/runs/${encodeURIComponent(runId)}`);
  } catch (error) {
    if (known === undefined) {
      byId("run-view").hidden = true;
      runsError.textContent = describe(error);
      return;
    }
    record = known;
  }
  const current = new RunView(record, {
    onDecided: () => stream?.poke(),
    // an answer created the run that resumes the thread: the same view follows it on
    onResumed: (next) => void continueWith(current, next),
    // the list shows statuses too: refresh it when this run's changes
    onStatus: () => void refreshRuns(),
    onFinished: () => {
      void refreshRuns();
      void request("GET", `/runs/${encodeURIComponent(current.runId)}`).then((run) => current.applyRecord(run), () => undefined);
    },
  });
  view = current;
  current.applyRecord(record);
  follow(current);
}

/**
 * Follows the view's run: its events from the start, live until it ends.
 * @param {RunView} current
 */
function follow(current) {
  stream = followEvents(`/runs/${encodeURIComponent(current.runId)}/events`, {
    headers: () => authHeaders(),
    errorOf,
    onEvent: (event) => current.apply(event),
    onStatus: (status, detail) => {
      connection.textContent = status === "live" ? "live" : status === "ended" ? "" : `${status}${detail ? `: ${detail}` : ""}`;
      connection.dataset["state"] = status;
      // the run ended at an interrupt: an answer from elsewhere (the CLI, the SDK) starts the next run
      if (status === "ended" && current.waitingHere) void watchForResume(current);
    },
  });
}

/**
 * While `current`'s thread waits on its run, looks (every RESUME_WATCH.everyMs, bounded) for the
 * run that resumes it — answered in another tab, the CLI or the SDK — and goes on with it.
 * @param {RunView} current
 */
async function watchForResume(current) {
  const runId = current.runId;
  const until = Date.now() + RESUME_WATCH.forMs;
  while (view === current && current.runId === runId && current.waitingHere && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, RESUME_WATCH.everyMs));
    if (view !== current || current.runId !== runId || !current.waitingHere) return;
    try {
      const run = await request("GET", `/runs/${encodeURIComponent(runId)}`);
      if (run?.waiting !== false) continue;
      const runs = await request("GET", `/threads/${encodeURIComponent(current.threadId)}/runs?limit=10`);
      const next = (Array.isArray(runs) ? runs : []).find((/** @type {Record<string, any>} */ item) => item.resumes_run === runId);
      if (next !== undefined) await continueWith(current, String(next.run_id));
      return;
    } catch {
      // the server is away for a moment: look again
    }
  }
}

/**
 * A run's stored events after `after` (seq), read once (`follow=0`): what a run that ended at an
 * interrupt stored after its stream ended. Empty when they cannot be read.
 * @param {string} runId
 * @param {number} after
 * @returns {Promise<Record<string, any>[]>}
 */
async function storedEventsAfter(runId, after) {
  try {
    const response = await fetch(`/runs/${encodeURIComponent(runId)}/events?follow=0&after=${after}`, { headers: authHeaders() });
    if (!response.ok) return [];
    const text = await response.text();
    return text
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice("data: ".length)))
      .filter((event) => event !== null && typeof event === "object" && typeof event.type === "string");
  } catch {
    return [];
  }
}

/** Runs a view is switching to (`continueWith` in flight). */
const continuing = new Set();

/**
 * The run that resumes the thread (a new run, as LangGraph Platform makes it) continues in the
 * same view: its timeline goes on below the interrupt, and the address names it.
 * @param {RunView} current
 * @param {string} nextRunId
 */
async function continueWith(current, nextRunId) {
  // the answer's response and the watch for an answer from elsewhere may both find it: once
  if (view !== current || current.runId === nextRunId || continuing.has(nextRunId)) return;
  continuing.add(nextRunId);
  const seen = stream?.lastSeq() ?? 0;
  stream?.stop();
  stream = null;
  // what the resumed run stored after it ended (the decisions, the resume given), once, before the new run's
  for (const event of await storedEventsAfter(current.runId, seen)) current.apply(event);
  let record;
  try {
    record = await request("GET", `/runs/${encodeURIComponent(nextRunId)}`);
  } catch {
    record = { run_id: nextRunId, thread_id: current.threadId, status: "pending" };
  }
  continuing.delete(nextRunId);
  if (view !== current) return;
  history.replaceState(null, "", `#run=${encodeURIComponent(nextRunId)}`);
  current.continueWith(record);
  markSelected(nextRunId);
  follow(current);
  void refreshRuns();
}

/** Set on a run read through the LangGraph thread routes when its thread waits on it. */
const THREAD_WAITING = Symbol("thread waiting");

/** Whether the server has devmind's `GET /runs` list; if not, the LangGraph thread routes are used. */
let runsListRoute = true;

/**
 * Recent runs, newest first: devmind's `GET /runs?limit=N`, or (on a server without it) the
 * latest runs of the most recently updated threads through the LangGraph routes.
 * @returns {Promise<Record<string, any>[]>}
 */
async function recentRuns() {
  if (runsListRoute) {
    try {
      const runs = await request("GET", `/runs?limit=${RUNS_SHOWN}`);
      return Array.isArray(runs) ? runs : Array.isArray(runs?.runs) ? runs.runs : [];
    } catch (error) {
      if (!(error instanceof ApiError) || (error.status !== 404 && error.status !== 405)) throw error;
      runsListRoute = false;
    }
  }
  const threads = await request("POST", "/threads/search", { limit: THREADS_SCANNED, sort_by: "updated_at", sort_order: "desc" });
  const lists = await Promise.all(
    (Array.isArray(threads) ? threads : []).map(async (/** @type {Record<string, any>} */ thread) => {
      const runs = await request("GET", `/threads/${encodeURIComponent(String(thread.thread_id))}/runs?limit=5`).catch(() => []);
      const list = Array.isArray(runs) ? runs : [];
      // the thread waits on its newest run (LangGraph's records have no `waiting` of their own)
      const newest = [...list].sort((a, b) => String(b.created_at).localeCompare(String(a.created_at)))[0];
      if (newest !== undefined && thread.status === "interrupted") newest[THREAD_WAITING] = true;
      return list;
    }),
  );
  return lists
    .flat()
    .sort((a, b) => String(b.created_at).localeCompare(String(a.created_at)))
    .slice(0, RUNS_SHOWN);
}

/** Reloads the recent runs list. */
async function refreshRuns() {
  let items;
  try {
    items = await recentRuns();
  } catch (error) {
    runsError.textContent = error instanceof ApiError && (error.status === 401 || error.status === 403) ? "" : describe(error);
    return;
  }
  runsError.textContent = "";
  runsList.replaceChildren(
    ...items.map((/** @type {Record<string, any>} */ run) =>
      runListItem(run, { label: taskOf(run, items), onSelect: () => void selectRun(String(run.run_id)), threadWaiting: run[THREAD_WAITING] === true }),
    ),
  );
  if (items.length === 0) append(runsList, el("li", { class: "empty", text: "No runs yet." }));
  if (view !== null) markSelected(view.runId);
}

/** @param {string} runId */
function markSelected(runId) {
  for (const item of runsList.querySelectorAll("li[data-run-id]")) {
    const selected = item.getAttribute("data-run-id") === runId;
    item.querySelector("button")?.setAttribute("aria-current", selected ? "true" : "false");
  }
}

/**
 * The first user message of a run, for the list; a run that resumes another (no input of its
 * own) is labelled by the run it resumes, when that one is listed too.
 * @param {Record<string, any>} run
 * @param {Record<string, any>[]} listed
 * @returns {string}
 */
function taskOf(run, listed) {
  const resumed = typeof run.resumes_run === "string" ? listed.find((item) => item.run_id === run.resumes_run) : undefined;
  if (resumed !== undefined) return `${taskOf(resumed, listed.filter((item) => item !== resumed))} (resumed)`;
  const graph = typeof run.graph_id === "string" ? run.graph_id : String(run.assistant_id);
  return runLabel(run, startedTasks.get(String(run.run_id)), forms.get(graph)?.fields.map((field) => field.name));
}

/** @param {unknown} error @returns {string} */
function describe(error) {
  if (error instanceof ApiError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

void loadGraphs();
void refreshRuns();
setInterval(() => {
  if (document.visibilityState === "visible") void refreshRuns();
}, RUNS_REFRESH_MS);
watchDevStatus();
const initial = selectedRunId();
if (initial !== null) void selectRun(initial);
