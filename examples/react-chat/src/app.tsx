import { useCallback, useEffect, useState } from "react";
import { HumanMessage } from "@langchain/core/messages";
import { useStream } from "@langchain/react";
import type { BaseMessage } from "@langchain/core/messages";
import { forgetThread, rememberThread, type ChatConfig } from "./config.js";
import { Approval } from "./approval.js";
import { MessageRow } from "./message-row.js";

/** The thread's state as this page reads it: a message list (devmind's agent and `createAgent` graphs both have one). */
export interface ChatState {
  messages: BaseMessage[];
}

/** How often the page asks the server's `GET /ok` after it lost the connection. */
const RECONNECT_POLL_MS = 1_000;

/**
 * The page: the thread (kept in the URL) and the chat bound to it. When the connection is lost
 * for longer than the SDK's own retries (five, about 20 s: a server restart on a loaded machine),
 * the page waits for the server's `GET /ok` and mounts the chat again on the same thread, as a
 * reload would: the hook hydrates the thread and re-attaches to the run still in flight.
 */
export function App({ config }: { config: ChatConfig }) {
  const [threadId, setThreadId] = useState<string | null>(config.threadId);
  const [session, setSession] = useState(0);
  const reconnect = useCallback(() => setSession((n) => n + 1), []);
  return <Chat key={session} config={config} threadId={threadId} setThreadId={setThreadId} reconnect={reconnect} />;
}

/** A lost connection (fetch failed or the event stream ended), not an answer from the server. */
function isConnectionLost(error: unknown): boolean {
  return error instanceof TypeError || /failed to fetch|network|stream closed|load failed/i.test(String((error as Error | undefined)?.message ?? error));
}

interface ChatProps {
  config: ChatConfig;
  threadId: string | null;
  setThreadId: (id: string | null) => void;
  reconnect: () => void;
}

/**
 * The chat: one `useStream` (the event-based protocol of `@langchain/react` v1) bound to the
 * thread in the URL. Reloading the page binds the same thread again, and the hook hydrates it
 * and re-attaches to a run still in flight.
 */
function Chat({ config, threadId, setThreadId, reconnect }: ChatProps) {
  const [draft, setDraft] = useState("");
  // from a submit until the server accepted its run: the hook cannot cancel a run it has no id for
  const [starting, setStarting] = useState(false);
  const stream = useStream<ChatState>({
    apiUrl: config.apiUrl,
    assistantId: config.assistantId,
    ...(config.apiKey === undefined ? {} : { apiKey: config.apiKey }),
    threadId,
    onThreadId: (id) => {
      setThreadId(id);
      rememberThread(id);
    },
    onCreated: () => setStarting(false),
  });

  const lost = stream.error !== undefined && stream.error !== null && isConnectionLost(stream.error);
  useEffect(() => {
    if (!lost) return undefined;
    const timer = window.setInterval(() => {
      fetch(`${config.apiUrl}/ok`)
        .then((response) => {
          if (response.ok) reconnect();
        })
        .catch(() => undefined);
    }, RECONNECT_POLL_MS);
    return () => window.clearInterval(timer);
  }, [lost, config.apiUrl, reconnect]);

  const send = () => {
    const text = draft.trim();
    if (text === "") return;
    setDraft("");
    setStarting(true);
    void stream.submit({ messages: [new HumanMessage(text)] }, { onError: () => setStarting(false) });
  };

  // `stop()` cancels the run this page started; a run it re-attached to after a reload has no id
  // in the hook, so the thread's unfinished runs are cancelled through the client as well
  const stop = async () => {
    await stream.stop();
    const id = stream.threadId;
    if (id === null) return;
    const runs = await stream.client.runs.list(id, { limit: 10 });
    const unfinished = runs.filter((run) => run.status === "pending" || run.status === "running");
    await Promise.all(unfinished.map((run) => stream.client.runs.cancel(id, run.run_id)));
  };

  const status = lost ? "reconnecting" : stream.isThreadLoading ? "loading" : stream.isLoading ? "running" : stream.interrupt !== undefined ? "waiting" : "idle";
  return (
    <main>
      <header>
        <h1>devmind chat</h1>
        <span data-testid="status" data-status={status}>
          {status}
        </span>
        <span data-testid="thread-id">{stream.threadId ?? "new thread"}</span>
        <button
          data-testid="new-thread"
          type="button"
          disabled={stream.isLoading}
          onClick={() => {
            setThreadId(null);
            forgetThread();
          }}
        >
          New thread
        </button>
      </header>
      <ol data-testid="messages">
        {stream.messages.map((message, index) => (
          <MessageRow key={message.id ?? index} stream={stream} message={message} messages={stream.messages} toolCalls={stream.toolCalls} busy={stream.isLoading} first={index === 0} />
        ))}
      </ol>
      {stream.interrupt !== undefined && !stream.isLoading ? <Approval key={stream.interrupt.id ?? "interrupt"} stream={stream} interruptId={stream.interrupt.id} value={stream.interrupt.value} /> : null}
      {stream.error !== undefined && stream.error !== null ? <p data-testid="error">{String((stream.error as Error).message ?? stream.error)}</p> : null}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          send();
        }}
      >
        <textarea data-testid="input" value={draft} placeholder="Ask the agent…" onChange={(event) => setDraft(event.target.value)} />
        <button data-testid="send" type="submit" disabled={stream.isLoading || draft.trim() === ""}>
          Send
        </button>
        <button data-testid="stop" type="button" disabled={!stream.isLoading || starting} onClick={() => void stop()}>
          Stop
        </button>
      </form>
    </main>
  );
}
