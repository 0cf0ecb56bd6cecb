/**
 * Example (a): a plain StateGraph with two nodes and an `interrupt()`. `write` drafts a reply,
 * `review` pauses the run until a human answers with `{ "approved": boolean, "note"?: string }`,
 * then the reply is sent or dropped. Run it with `devmind run --graph review --input '{"topic":"x"}'`
 * and answer with `devmind resume RUN_ID --value '{"approved":true}'`.
 */
import { Annotation, END, START, StateGraph, interrupt } from "@langchain/langgraph";

const State = Annotation.Root({
  topic: Annotation<string>(),
  draft: Annotation<string | null>({ reducer: (_, next) => next, default: () => null }),
  outcome: Annotation<string | null>({ reducer: (_, next) => next, default: () => null }),
});

/** What the reviewer answers. */
interface Review {
  approved: boolean;
  note?: string;
}

const workflow = new StateGraph(State)
  .addNode("write", (state, config) => {
    config.writer?.({ progress: "drafting", topic: state.topic });
    return { draft: `A short note about ${state.topic}.` };
  })
  .addNode("review", (state) => {
    const review = interrupt<{ question: string; draft: string | null }, Review>({ question: "Send this draft?", draft: state.draft });
    return { outcome: review.approved ? `sent: ${state.draft}${review.note ? ` (${review.note})` : ""}` : "dropped" };
  })
  .addEdge(START, "write")
  .addEdge("write", "review")
  .addEdge("review", END);

/** Uncompiled: devmind compiles it with its own checkpointer. */
export const graph = workflow;
