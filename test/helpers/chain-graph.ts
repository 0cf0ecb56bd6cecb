import { Annotation, END, interrupt, START, StateGraph } from "@langchain/langgraph";

/** A state whose `path` collects the names of the nodes that ran, in order. */
export const chainState = Annotation.Root({ path: Annotation<string[]>({ reducer: (all, more) => all.concat(more), default: () => [] }) });

/** Three steps, each appending its name to `path`: the official server's tests use such a chain for breakpoints and time travel. */
export const chainGraph = new StateGraph(chainState)
  .addNode("a", () => ({ path: ["a"] }))
  .addNode("b", () => ({ path: ["b"] }))
  .addNode("c", () => ({ path: ["c"] }))
  .addEdge(START, "a")
  .addEdge("a", "b")
  .addEdge("b", "c")
  .addEdge("c", END)
  .compile();

/** `a` then `wait`, which interrupts for a value it appends: a run that stays interrupted, with checkpoints, until resumed. */
export const pauseGraph = new StateGraph(chainState)
  .addNode("a", () => ({ path: ["a"] }))
  .addNode("wait", () => ({ path: [String(interrupt("value?"))] }))
  .addEdge(START, "a")
  .addEdge("a", "wait")
  .addEdge("wait", END)
  .compile();
