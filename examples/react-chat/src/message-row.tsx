import { useState } from "react";
import { HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { useMessageMetadata, type AnyStream, type AssembledToolCall } from "@langchain/react";
import { checkpointBefore } from "./fork-point.js";
import { callsOf, resultOf, textOf } from "./messages.js";

interface RowProps {
  stream: AnyStream;
  message: BaseMessage;
  /** The whole list, to find the result of each tool call this message asked for. */
  messages: readonly BaseMessage[];
  /** The calls assembled from the `tools` channel: their live status while they run. */
  toolCalls: readonly AssembledToolCall[];
  busy: boolean;
  /** The thread's first message: there is no checkpoint before it to fork from. */
  first: boolean;
}

/**
 * One message. An AI message lists its tool calls, each with its status and result; a tool
 * message is shown folded into the call it answers. A human message can be edited: the edit is
 * submitted from the checkpoint before it (`forkFrom`), so the thread continues from there.
 */
export function MessageRow({ stream, message, messages, toolCalls, busy, first }: RowProps) {
  const type = message.type;
  if (type === "tool") return null;
  const text = textOf(message.content);
  return (
    <li data-testid="message" data-type={type} data-id={message.id ?? ""}>
      <span className="role">{type === "human" ? "you" : type === "ai" ? "agent" : type}</span>
      {type === "human" ? <HumanText stream={stream} message={message} text={text} busy={busy} first={first} /> : <p className="text">{text}</p>}
      {callsOf(message).map((call) => {
        const result = resultOf(messages, call.id);
        const live = toolCalls.find((candidate) => candidate.callId === call.id);
        const status = result !== undefined ? "done" : (live?.status ?? "waiting");
        return (
          <details key={call.id} data-testid="tool-call" data-name={call.name} data-call-id={call.id} data-status={status} open>
            <summary>
              {call.name}({JSON.stringify(call.args)}) · {status}
            </summary>
            <pre data-testid="tool-result">{result === undefined ? "" : textOf(result.content)}</pre>
          </details>
        );
      })}
    </li>
  );
}

function HumanText({ stream, message, text, busy, first }: { stream: AnyStream; message: BaseMessage; text: string; busy: boolean; first: boolean }) {
  // known once the message is in a checkpoint (an optimistic echo has none yet)
  const stored = useMessageMetadata(stream, message.id)?.parentCheckpointId !== undefined;
  const [editing, setEditing] = useState<string | null>(null);
  if (editing === null) {
    return (
      <>
        <p className="text">{text}</p>
        <button data-testid="edit" type="button" disabled={busy || first || !stored} title={first ? "the first message: start a new thread to change it" : undefined} onClick={() => setEditing(text)}>
          Edit
        </button>
      </>
    );
  }
  const save = async (text: string) => {
    setEditing(null);
    const from = message.id === undefined ? undefined : await checkpointBefore(stream, message.id);
    if (from !== undefined) await stream.submit({ messages: [new HumanMessage(text)] }, { forkFrom: from });
  };
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        void save(editing);
      }}
    >
      <textarea data-testid="edit-input" value={editing} onChange={(event) => setEditing(event.target.value)} />
      <button data-testid="edit-save" type="submit">
        Save and rerun
      </button>
      <button type="button" onClick={() => setEditing(null)}>
        Cancel
      </button>
    </form>
  );
}
