import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Option, type Command } from "commander";
import { loadConfig, type DevmindConfig } from "../config.js";
import { MEMORY_DATA_DIR } from "../constants.js";
import type { DataDirProgress } from "../db/open-database.js";
import type { Decision } from "../vocabulary/decisions.js";
import { checkRunId } from "../runtime/queue/run-record.js";
import { DEMO_OUTPUT_FILE, DEMO_TASK, DEMO_TURNS } from "./demo-script.js";
import { EXIT } from "./exit-codes.js";
import { openRuntime, type OpenedRuntime } from "./open-runtime.js";
import { driveRun, openRequests, runSummary } from "./run-session.js";
import { holdRunWhenOutputCloses, writeStdout } from "./closed-output.js";
import { Timeline } from "./timeline.js";
import { cliName } from "./cli-name.js";

const SCRIPT_FILE = "scripted-model.json";
const RUN_ID_FILE = "run-id";
const WORKSPACE_DIR = "workspace";
const DEMO_DB_DIR = "demo";
const DEMO_PRINCIPAL = "demo";

/**
 * Registers `devmind demo`: the offline showcase (CONTRACT section 7). On the demos' embedded
 * database in `$DEVMIND_DATA_DIR/demo` (made on the first demo from the built migrated template,
 * shared by later demos so each one adds a run, not a database) and a scripted model (labelled as
 * such; no key, no network, whatever DATABASE_URL or DEVMIND_MODEL say), a child process (this
 * CLI, `demo --phase execute`, hidden flags) creates the run and executes it until it stops for
 * approval, then exits. The demo's own process, which had not opened the database until then,
 * approves the call, picks the run up from its checkpoint, finishes it and replays the stored
 * timeline, then prints the answer, where the data lives and what to try next. Two processes,
 * two opens of the embedded database: each costs a second or more of CPU.
 */
export function registerDemoCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("demo")
    .description("offline showcase: tool calls, an approval pause, a fresh process resuming (scripted model, embedded database)")
    .addOption(new Option("--phase <phase>", "internal: one step of the demo in a child process").choices(["execute"]).hideHelp())
    .addOption(new Option("--dir <path>", "internal: the demo's database directory").hideHelp())
    .addOption(new Option("--run-dir <path>", "internal: this demo's folder (script, workspace, run id)").hideHelp())
    .action(async (options: { phase?: "execute"; dir?: string; runDir?: string }, command: Command) => {
      if (options.phase !== undefined) {
        if (options.dir === undefined || options.runDir === undefined) command.error("error: --phase needs --dir and --run-dir", { exitCode: EXIT.usage });
        setExitCode(await demoPhase(options.phase, options.dir, options.runDir));
        return;
      }
      setExitCode(await demo());
    });
}

/** The demo's own configuration: only the embedded database in `dbDir` and the scripted model of `runDir`. */
function demoConfig(dbDir: string, runDir: string): DevmindConfig {
  return loadConfig({ DEVMIND_DATA_DIR: dbDir, DEVMIND_MODEL: `scripted:${join(runDir, SCRIPT_FILE)}`, DEVMIND_WORKSPACE: join(runDir, WORKSPACE_DIR) });
}

async function demo(): Promise<number> {
  const out = (text = ""): void => void process.stdout.write(`${text}\n`);
  const base = loadConfig().dataDir;
  const dbDir = resolve(base === MEMORY_DATA_DIR ? tmpdir() : base, DEMO_DB_DIR);
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  const runDir = join(dbDir, stamp);
  if (existsSync(runDir)) throw new Error(`${runDir} already exists; run the demo again in a second`);
  mkdirSync(join(runDir, WORKSPACE_DIR), { recursive: true });
  writeFileSync(join(runDir, SCRIPT_FILE), `${JSON.stringify(DEMO_TURNS, null, 2)}\n`);

  out("devmind demo · scripted model — no API key used, no network: the model's answers come from a built-in script");
  out(`data: ${dbDir}  (embedded PGlite database in pgdata/, shared by every demo; this demo's workspace in ${stamp}/${WORKSPACE_DIR}/)`);
  out();
  out(`1. task: "${DEMO_TASK}"`);
  out("   a child process creates the run and executes it");
  out();
  const first = await child(["--phase", "execute", "--dir", dbDir, "--run-dir", runDir]);
  out();
  if (first.code !== EXIT.awaitingApproval) return failed(`the first process exited with ${first.code ?? first.signal}, expected 3 (waiting for approval)`);
  const runId = checkRunId(readFileSync(join(runDir, RUN_ID_FILE), "utf8").trim());
  out(`2. process ${first.pid} exited with code 3: the run waits for approval of write_file.`);
  out("   Nothing is running now; the run and its checkpoints are in the database.");
  out(`3. this process (${process.pid}), which has not opened the database yet, approves it as "${DEMO_PRINCIPAL}"`);
  out(`   (like \`${cliName()} approve ${runId}\`), continues the run from its checkpoint and replays the stored`);
  out(`   timeline (like \`${cliName()} show ${runId}\`)`);
  out();
  const second = await demoPhase("approve", dbDir, runDir);
  out();
  if (second !== EXIT.success) return failed(`the approved run did not succeed (exit code ${second}), expected 0`);
  out(`4. process ${process.pid} finished the run; the file it wrote:`);
  const file = join(runDir, WORKSPACE_DIR, DEMO_OUTPUT_FILE);
  out(`${file}:`);
  for (const line of readFileSync(file, "utf8").trimEnd().split("\n")) out(`   ${line}`);
  out();
  out("what to try next:");
  out(`  look around:        DEVMIND_DATA_DIR=${dbDir} npx devmind show ${runId}   (or: runs, events ${runId})`);
  out('  a real model:       OPENAI_API_KEY=sk-... npx devmind run "list the files in the workspace and describe them"');
  out("                      any OpenAI-compatible server: OPENAI_BASE_URL=http://127.0.0.1:11434/v1 DEVMIND_MODEL=llama3.1");
  out("  your own graph:     next to its langgraph.json: npx devmind graphs, then npx devmind run --graph ID --input '{...}'");
  out("                      (README: Bring your graph; an example: cd examples/approval-graph)");
  out("  server and workers: DATABASE_URL=postgres://... npx devmind serve   and, anywhere else, npx devmind worker");
  out(`  clean up:           rm -rf ${dbDir}   (every demo's database and workspace)`);
  return EXIT.success;
}

function failed(message: string): number {
  process.stderr.write(`devmind demo: ${message}\n`);
  return EXIT.runFailed;
}

/** Runs this CLI again as a child (same node flags, so it also works from source), sharing the terminal. */
function child(args: string[]): Promise<{ pid: number; code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((done, fail) => {
    const script = process.argv[1] as string;
    const proc = spawn(process.execPath, [...process.execArgv, script, "demo", ...args], { stdio: "inherit" });
    proc.once("error", fail);
    proc.once("close", (code, signal) => done({ pid: proc.pid ?? 0, code, signal }));
  });
}

/** Says what happens while a new embedded database is made, so the wait is never silent. */
function showProgress(progress: DataDirProgress): void {
  if (progress.phase === "creating") {
    const how = progress.source === "template" ? "a copy of the migrated template built with devmind" : "initdb; no usable template was built, this takes 5-20 s";
    process.stdout.write(`creating the embedded database in ${progress.pgdata} (${how})…\n`);
  } else {
    process.stdout.write(`created the embedded database in ${(progress.ms / 1000).toFixed(1)} s\n`);
  }
}

/**
 * One step of the demo, in its own process: create the run and execute it until the approval
 * pause, or approve it, finish it and replay its stored timeline.
 */
async function demoPhase(phase: "execute" | "approve", dbDir: string, runDir: string): Promise<number> {
  const opened = await openRuntime({ config: demoConfig(dbDir, runDir), readyGraphs: "all", onDatabaseProgress: showProgress });
  try {
    let runId: string;
    let waitedOn: string | null = null;
    if (phase === "execute") {
      runId = (await opened.runtime.runs.create({ input: { messages: [DEMO_TASK] } })).run_id;
      writeFileSync(join(runDir, RUN_ID_FILE), `${runId}\n`);
    } else {
      runId = checkRunId(readFileSync(join(runDir, RUN_ID_FILE), "utf8").trim());
      const open = await openRequests(opened, runId);
      const decisions = open.map((request): Decision => ({ type: "approve", tool_call_id: request.tool_call_id }));
      // the decision creates the run that resumes the thread (a resume is a new run), claimed here
      const next = await opened.runtime.runs.decide(runId, { decisions }, { principal: DEMO_PRINCIPAL, reason: "approved by the demo" }, { executeHere: true });
      // continued here: a closed stdout must not leave the claimed run to nobody (closed-output.ts)
      holdRunWhenOutputCloses(next.run_id);
      for (const request of open) writeStdout(`✓ approved ${request.name} by ${DEMO_PRINCIPAL}\n`);
      writeStdout(`run ${next.run_id} resumes the thread of run ${runId}\n`);
      waitedOn = runId;
      runId = next.run_id;
    }
    const code = await driveRun(opened, runId, {
      json: false,
      verbose: false,
      interactive: false,
      principal: DEMO_PRINCIPAL,
      explainWaiting: false,
      intro: phase === "execute" ? `process ${process.pid} · run ${runId}` : `process ${process.pid} (another process) · continuing run ${runId}`,
    });
    if (phase === "approve" && code === EXIT.success) await replay(opened, waitedOn === null ? [runId] : [waitedOn, runId]);
    return code;
  } finally {
    await opened.close();
  }
}

/** Prints the stored timeline of the thread's runs (the one that stopped for approval, then the one that resumed it), as `devmind show` does. */
async function replay(opened: OpenedRuntime, runIds: string[]): Promise<void> {
  process.stdout.write("\nthe stored timeline:\n");
  for (const runId of runIds) {
    const timeline = new Timeline({ tty: false, verbose: false, write: (text) => void process.stdout.write(`   ${text}`) });
    timeline.showNodes(!opened.runtime.graphs.reportsSteps((await opened.runtime.runs.get(runId)).graph_id));
    for await (const event of opened.runtime.runs.events(runId)) timeline.event(event);
    timeline.stop();
    process.stdout.write(`   ${await runSummary(opened.runtime, await opened.runtime.runs.get(runId))}\n`);
  }
}
