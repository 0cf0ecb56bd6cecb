import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Option, type Command } from "commander";
import { loadConfig, type DevmindConfig } from "../config.js";
import { MEMORY_DATA_DIR } from "../constants.js";
import type { Decision } from "../graph/decisions.js";
import { checkRunId } from "../runtime/run-record.js";
import { DEMO_OUTPUT_FILE, DEMO_TASK, DEMO_TURNS } from "./demo-script.js";
import { EXIT } from "./exit-codes.js";
import { openRuntime } from "./open-runtime.js";
import { driveRun, openRequests, summary } from "./run-session.js";
import { Timeline } from "./timeline.js";
import { cliName } from "./cli-name.js";

const SCRIPT_FILE = "scripted-model.json";
const WORKSPACE_DIR = "workspace";
const DEMO_PRINCIPAL = "demo";

/**
 * Registers `devmind demo`: the offline showcase (CONTRACT section 7). On a fresh embedded
 * database in `$DEVMIND_DATA_DIR/demo-<time>` and a scripted model (labelled as such; no key, no
 * network, whatever DATABASE_URL or DEVMIND_MODEL say), it creates a run, executes it in a child
 * process that exits when the run stops for approval, approves it from a fresh child process
 * that picks the run up from its checkpoint and finishes it, then replays the stored timeline,
 * prints the answer, where the data lives and what to try next. The children are this CLI
 * (`demo --phase …`, hidden flags), so each step is a real, separate process.
 */
export function registerDemoCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("demo")
    .description("offline showcase: tool calls, an approval pause, a fresh process resuming (scripted model, embedded database)")
    .addOption(new Option("--phase <phase>", "internal: one step of the demo in a child process").choices(["execute", "approve"]).hideHelp())
    .addOption(new Option("--dir <path>", "internal: the demo's data directory").hideHelp())
    .addOption(new Option("--run <id>", "internal: the demo's run").hideHelp())
    .action(async (options: { phase?: "execute" | "approve"; dir?: string; run?: string }, command: Command) => {
      if (options.phase !== undefined) {
        if (options.dir === undefined || options.run === undefined) command.error("error: --phase needs --dir and --run", { exitCode: EXIT.usage });
        setExitCode(await demoPhase(options.phase, options.dir, checkRunId(options.run)));
        return;
      }
      setExitCode(await demo());
    });
}

/** The demo's own configuration: only the embedded database in `dir` and the scripted model. */
function demoConfig(dir: string): DevmindConfig {
  return loadConfig({ DEVMIND_DATA_DIR: dir, DEVMIND_MODEL: `scripted:${join(dir, SCRIPT_FILE)}`, DEVMIND_WORKSPACE: join(dir, WORKSPACE_DIR) });
}

async function demo(): Promise<number> {
  const out = (text = ""): void => void process.stdout.write(`${text}\n`);
  const base = loadConfig().dataDir;
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  const dir = resolve(base === MEMORY_DATA_DIR ? tmpdir() : base, `demo-${stamp}`);
  if (existsSync(dir)) throw new Error(`${dir} already exists; run the demo again in a second`);
  mkdirSync(join(dir, WORKSPACE_DIR), { recursive: true });
  writeFileSync(join(dir, SCRIPT_FILE), `${JSON.stringify(DEMO_TURNS, null, 2)}\n`);

  out("devmind demo · scripted model — no API key used, no network: the model's answers come from a built-in script");
  out(`data: ${dir}  (embedded PGlite database in pgdata/, the agent's workspace in ${WORKSPACE_DIR}/)`);
  out();
  const opened = await openRuntime({ config: demoConfig(dir) });
  let runId: string;
  try {
    const run = await opened.runtime.runs.create({ input: { messages: [DEMO_TASK] } });
    runId = run.run_id;
  } finally {
    await opened.close();
  }
  out(`1. task: "${DEMO_TASK}"`);
  out(`   created run ${runId}; a child process executes it`);
  out();
  const first = await child(["--phase", "execute", "--dir", dir, "--run", runId]);
  out();
  if (first.code !== EXIT.awaitingApproval) return failed(`the first process exited with ${first.code ?? first.signal}, expected 3 (waiting for approval)`);
  out(`2. process ${first.pid} exited with code 3: the run waits for approval of write_file.`);
  out("   Nothing is running now; the run and its checkpoints are in the database.");
  out(`3. a fresh process approves it as "${DEMO_PRINCIPAL}" (like \`${cliName()} approve ${runId}\`) and continues from the checkpoint`);
  out();
  const second = await child(["--phase", "approve", "--dir", dir, "--run", runId]);
  out();
  if (second.code !== EXIT.success) return failed(`the second process exited with ${second.code ?? second.signal}, expected 0`);
  out(`4. process ${second.pid} finished the run. The stored timeline (\`${cliName()} show ${runId}\`):`);
  const reopened = await openRuntime({ config: demoConfig(dir) });
  try {
    const timeline = new Timeline({ tty: false, verbose: false, write: (text) => void process.stdout.write(`   ${text}`) });
    for await (const event of reopened.runtime.runs.events(runId)) timeline.event(event);
    timeline.stop();
    out(`   ${summary(await reopened.runtime.runs.get(runId))}`);
  } finally {
    await reopened.close();
  }
  out();
  out(`${join(dir, WORKSPACE_DIR, DEMO_OUTPUT_FILE)}:`);
  for (const line of readFileSync(join(dir, WORKSPACE_DIR, DEMO_OUTPUT_FILE), "utf8").trimEnd().split("\n")) out(`   ${line}`);
  out();
  out("what to try next:");
  out(`  look around:        DEVMIND_DATA_DIR=${dir} npx devmind show ${runId}   (or: runs, events ${runId})`);
  out('  a real model:       OPENAI_API_KEY=sk-... npx devmind run "list the files in the workspace and describe them"');
  out("                      any OpenAI-compatible server: OPENAI_BASE_URL=http://127.0.0.1:11434/v1 DEVMIND_MODEL=llama3.1");
  out("  server and workers: DATABASE_URL=postgres://... npx devmind serve   and, anywhere else, npx devmind worker");
  out(`  clean up:           rm -rf ${dir}`);
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

/** One step of the demo, in its own process: execute until the approval pause, or approve and finish. */
async function demoPhase(phase: "execute" | "approve", dir: string, runId: string): Promise<number> {
  const opened = await openRuntime({ config: demoConfig(dir), requireModel: true });
  try {
    if (phase === "approve") {
      const open = await openRequests(opened, runId);
      const decisions = open.map((request): Decision => ({ type: "approve", tool_call_id: request.tool_call_id }));
      await opened.runtime.runs.decide(runId, { decisions }, { principal: DEMO_PRINCIPAL, reason: "approved by the demo" });
      for (const request of open) process.stdout.write(`✓ approved ${request.name} by ${DEMO_PRINCIPAL}\n`);
    }
    return await driveRun(opened, runId, {
      json: false,
      verbose: false,
      interactive: false,
      principal: DEMO_PRINCIPAL,
      explainWaiting: false,
      intro: phase === "execute" ? `process ${process.pid} · run ${runId}` : `process ${process.pid} (fresh) · continuing run ${runId}`,
    });
  } finally {
    await opened.close();
  }
}
