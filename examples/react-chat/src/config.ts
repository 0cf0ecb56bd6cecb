/** Where the chat talks to, read once from the page's URL with Vite's build-time defaults. */
export interface ChatConfig {
  /** The agent server: `devmind serve` (or any LangGraph server speaking the event protocol). */
  apiUrl: string;
  /** The graph (assistant) id: `agent` for devmind's built-in agent. */
  assistantId: string;
  /** Sent as `x-api-key` when the server has keys (DEVMIND_API_KEYS). */
  apiKey: string | undefined;
  /** The thread to show; kept in the URL (`?thread=`) so a reload reconnects to it. */
  threadId: string | null;
}

/**
 * `?apiUrl=&assistantId=&apiKey=&thread=` win over `VITE_API_URL`, `VITE_ASSISTANT_ID`,
 * `VITE_API_KEY`; the defaults are devmind's: http://127.0.0.1:8787 and `agent`.
 */
export function readConfig(location: Location): ChatConfig {
  const query = new URLSearchParams(location.search);
  const env = import.meta.env as Record<string, string | undefined>;
  return {
    apiUrl: query.get("apiUrl") ?? env["VITE_API_URL"] ?? "http://127.0.0.1:8787",
    assistantId: query.get("assistantId") ?? env["VITE_ASSISTANT_ID"] ?? "agent",
    apiKey: query.get("apiKey") ?? env["VITE_API_KEY"] ?? undefined,
    threadId: query.get("thread"),
  };
}

/** Puts the thread id in the address bar (no navigation), so a reload binds the same thread. */
export function rememberThread(threadId: string): void {
  const url = new URL(window.location.href);
  url.searchParams.set("thread", threadId);
  window.history.replaceState(null, "", url);
}

/** Takes the thread id out of the address bar: the next message starts a new thread. */
export function forgetThread(): void {
  const url = new URL(window.location.href);
  url.searchParams.delete("thread");
  window.history.replaceState(null, "", url);
}
