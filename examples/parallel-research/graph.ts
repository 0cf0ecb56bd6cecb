/**
 * Example (b): a graph with a subgraph and parallel `Send` branches. `plan` fans out one branch
 * per question with `Send`; each branch runs the `research` subgraph (look up, then an
 * `interrupt()` asking a human to confirm the finding when it is uncertain); `summarise` joins the
 * findings. Custom progress goes to `config.writer`, stored as the run's `custom` events.
 */
import { Annotation, END, START, Send, StateGraph, interrupt } from "@langchain/langgraph";

const Branch = Annotation.Root({
  question: Annotation<string>(),
  finding: Annotation<string | null>({ reducer: (_, next) => next, default: () => null }),
  findings: Annotation<string[]>({ reducer: (all, more) => all.concat(more), default: () => [] }),
});

/** The per-question subgraph: look up, then confirm uncertain findings with a human. */
const research = new StateGraph(Branch)
  .addNode("lookup", (state, config) => {
    config.writer?.({ looking_up: state.question });
    return { finding: `${state.question} -> ${state.question.length % 2 === 0 ? "sure" : "unsure"}` };
  })
  .addNode("confirm", (state) => {
    if (state.finding?.endsWith("sure") === true && !state.finding.endsWith("unsure")) return { findings: [state.finding] };
    const answer = interrupt<{ confirm: string | null }, { keep: boolean }>({ confirm: state.finding });
    return { findings: answer.keep ? [`${state.finding} (confirmed)`] : [] };
  })
  .addEdge(START, "lookup")
  .addEdge("lookup", "confirm")
  .addEdge("confirm", END)
  .compile();

const State = Annotation.Root({
  questions: Annotation<string[]>(),
  findings: Annotation<string[]>({ reducer: (all, more) => all.concat(more), default: () => [] }),
  report: Annotation<string | null>({ reducer: (_, next) => next, default: () => null }),
});

export const graph = new StateGraph(State)
  .addNode("plan", () => ({}))
  .addNode("research", research)
  .addNode("summarise", (state) => ({ report: [...state.findings].sort().join("; ") }))
  .addEdge(START, "plan")
  .addConditionalEdges("plan", (state) => state.questions.map((question) => new Send("research", { question })), ["research"])
  .addEdge("research", "summarise")
  .addEdge("summarise", END)
  .compile();
