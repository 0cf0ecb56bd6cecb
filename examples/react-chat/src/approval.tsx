import { useState } from "react";
import type { AnyStream } from "@langchain/react";
import { actionRequestsOf } from "./messages.js";

/**
 * The pending interrupt. An approval request (LangChain's human-in-the-loop shape, which devmind's
 * agent raises too) gets Approve / Reject, answered with `respond({decisions})`, one decision per
 * requested action; any other interrupt value is shown as JSON with a box for the JSON to resume with.
 */
export function Approval({ stream, interruptId, value }: { stream: AnyStream; interruptId: string | undefined; value: unknown }) {
  const [sent, setSent] = useState(false);
  const [reply, setReply] = useState("null");
  const requests = actionRequestsOf(value);
  const answer = (response: unknown) => {
    setSent(true);
    // the id of the interrupt shown: right after a reload the page shows the interrupt from the
    // thread's state before the event stream has replayed its `input.requested`
    void stream.respond(response, interruptId === undefined ? undefined : { interruptId });
  };
  if (requests === undefined) {
    return (
      <section data-testid="interrupt">
        <pre>{JSON.stringify(value, null, 2)}</pre>
        <textarea data-testid="resume-value" value={reply} onChange={(event) => setReply(event.target.value)} />
        <button data-testid="resume" type="button" disabled={sent} onClick={() => answer(JSON.parse(reply))}>
          Resume
        </button>
      </section>
    );
  }
  return (
    <section data-testid="approval">
      <h2>Approval needed</h2>
      <ul>
        {requests.map((request, index) => (
          <li key={index} data-testid="action-request" data-name={request.name}>
            <code>
              {request.name}({JSON.stringify(request.args)})
            </code>
            {request.description === undefined ? null : <p>{request.description}</p>}
          </li>
        ))}
      </ul>
      <button data-testid="approve" type="button" disabled={sent} onClick={() => answer({ decisions: requests.map(() => ({ type: "approve" })) })}>
        Approve
      </button>
      <button
        data-testid="reject"
        type="button"
        disabled={sent}
        onClick={() => answer({ decisions: requests.map(() => ({ type: "reject", message: "rejected in the chat" })) })}
      >
        Reject
      </button>
    </section>
  );
}
