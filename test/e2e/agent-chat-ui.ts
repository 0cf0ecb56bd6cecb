/**
 * Agent Chat UI (langchain-ai/agent-chat-ui) for the opt-in end-to-end test: its source at a
 * pinned commit, installed from the npm registry into a cache folder (AGENT_CHAT_UI_DIR), and its Next.js dev server
 * on loopback. The UI is used unchanged: nothing of it is patched.
 *
 * Where the source comes from, first match:
 * - `AGENT_CHAT_UI_SOURCE`: a folder holding the UI's source (a checkout or an extracted archive
 *   of the repository; its `package.json` must be the UI's);
 * - the cache folder (AGENT_CHAT_UI_DIR), if an earlier run prepared it;
 * - `git` from GitHub at AGENT_CHAT_UI_COMMIT (machines without GitHub — CI has only the npm
 *   registry — must use `AGENT_CHAT_UI_SOURCE`).
 *
 * The npm registry has no package of the current UI (`create-agent-chat-app` ships an older
 * template), so the source cannot come from there. The UI's lock file is pnpm's; `npm install`
 * resolves its package.json ranges instead, and the test prints the versions it got.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The UI's commit the test was written against (2026-07-25). */
export const AGENT_CHAT_UI_COMMIT = "fdc87e65307581b02898d33c62b3f285e56bd85b";

const REPOSITORY = "https://github.com/langchain-ai/agent-chat-ui.git";

/**
 * Where the prepared UI lives, source plus node_modules, one folder per commit:
 * `AGENT_CHAT_UI_DIR`, else under the system's temporary folder. Not under node_modules: Next.js
 * does not apply the UI's tsconfig path aliases (`@/…`) to files inside a node_modules folder.
 */
export const AGENT_CHAT_UI_DIR = process.env["AGENT_CHAT_UI_DIR"] || join(tmpdir(), "devmind-agent-chat-ui", AGENT_CHAT_UI_COMMIT);

const READY_MARK = ".devmind-installed";

function run(command: string, args: string[], cwd: string, timeoutMs: number): void {
  const result = spawnSync(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", timeout: timeoutMs });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed (${String(result.status ?? result.signal)}): ${(result.stderr || result.stdout || String(result.error)).slice(-2_000)}`);
  }
}

function isAgentChatUi(dir: string): boolean {
  const manifest = join(dir, "package.json");
  if (!existsSync(manifest)) return false;
  return (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "agent-chat-ui";
}

/**
 * Makes AGENT_CHAT_UI_DIR hold the UI's source and its installed dependencies; returns the
 * versions that matter (next, react, the LangGraph SDK). Installing takes minutes the first time.
 */
export function prepareAgentChatUi(): Record<string, string> {
  const dir = AGENT_CHAT_UI_DIR;
  if (!existsSync(join(dir, READY_MARK))) {
    if (!isAgentChatUi(dir)) {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      const source = process.env["AGENT_CHAT_UI_SOURCE"];
      if (source !== undefined && source !== "") {
        if (!isAgentChatUi(source)) throw new Error(`AGENT_CHAT_UI_SOURCE=${source} does not hold Agent Chat UI (no package.json named agent-chat-ui)`);
        cpSync(source, dir, { recursive: true, filter: (path) => !/[\\/](node_modules|\.next|\.git)$/.test(path) });
      } else {
        try {
          run("git", ["init", "-q"], dir, 30_000);
          run("git", ["fetch", "-q", "--depth", "1", REPOSITORY, AGENT_CHAT_UI_COMMIT], dir, 300_000);
          run("git", ["checkout", "-q", "FETCH_HEAD"], dir, 60_000);
        } catch (error) {
          rmSync(dir, { recursive: true, force: true });
          throw new Error(
            `cannot get Agent Chat UI ${AGENT_CHAT_UI_COMMIT} from GitHub (${error instanceof Error ? error.message.slice(0, 300) : String(error)}); ` +
              "set AGENT_CHAT_UI_SOURCE to a folder with its source (for example an extracted archive of that commit)",
          );
        }
      }
    }
    // npm resolves package.json; the pnpm lock file is not npm's
    run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], dir, 900_000);
    writeFileSync(join(dir, READY_MARK), new Date().toISOString());
  }
  const version = (name: string): string => (JSON.parse(readFileSync(join(dir, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
  return { next: version("next"), react: version("react"), "@langchain/langgraph-sdk": version("@langchain/langgraph-sdk"), "@langchain/core": version("@langchain/core") };
}

/** A running `next dev` of the UI. */
export interface AgentChatUiServer {
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts the UI's dev server on 127.0.0.1:`port` against a LangGraph server (`apiUrl`, assistant
 * `agent`), and resolves once it says it is ready. The first page request compiles the app
 * (a minute or two on a small machine); `next/font` cannot fetch its Google font offline and
 * falls back to a local font, which only the dev server allows.
 */
export function startAgentChatUi(apiUrl: string, port: number, timeoutMs = 180_000): Promise<AgentChatUiServer> {
  const nextBin = join(AGENT_CHAT_UI_DIR, "node_modules", "next", "dist", "bin", "next");
  const child: ChildProcess = spawn(process.execPath, [nextBin, "dev", "-H", "127.0.0.1", "-p", String(port)], {
    cwd: AGENT_CHAT_UI_DIR,
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", NEXT_TELEMETRY_DISABLED: "1", NEXT_PUBLIC_API_URL: apiUrl, NEXT_PUBLIC_ASSISTANT_ID: "agent" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const stop = async (): Promise<void> => {
    // next dev runs workers of its own: end the whole process group it leads
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // already gone
      }
    }
    const timer = setTimeout(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }, 10_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`next dev was not ready within ${timeoutMs} ms: ${output.slice(-2_000)}`));
    }, timeoutMs);
    const onData = (): void => {
      if (!/Ready in/.test(output)) return;
      clearTimeout(timer);
      child.stdout?.removeListener("data", onData);
      resolve({ url: `http://127.0.0.1:${port}`, output: () => output, stop });
    };
    child.stdout?.on("data", onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`next dev exited before it was ready: ${output.slice(-2_000)}`));
    });
  });
}
