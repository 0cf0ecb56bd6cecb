import type { ScriptedTurn } from "../src/model/scripted-turns.js";

/** Shape of the agent bench conversation: how many model rounds, and how big each AI message is. */
export const AGENT_SCRIPT = {
  /** Model rounds in all: `rounds - 1` rounds that each call `add`, then the final answer. */
  rounds: 100,
  /** Characters of "thinking" text each AI message carries. */
  thinkingChars: 200,
  /** Reported input tokens of the first call; each later call reports `inputTokensPerRound` more. */
  firstInputTokens: 600,
  inputTokensPerRound: 60,
  /** Reported output tokens of each call. */
  outputTokens: 55,
} as const;

/** The user's task that opens the thread on both sides. */
export const AGENT_TASK =
  "Count from 1 to 99 by repeatedly adding 1 with the add tool, one call per step, then tell me the final number.";

const THINKING_FILLER =
  " I keep the running total in mind, check that the previous tool result matches what I expected, " +
  "and only then move on to the next step of the count, so nothing is skipped or repeated along the way.";

/** About `chars` characters of plausible "thinking" text for round `round` (exactly `chars` long). */
export function thinkingText(round: number, chars: number): string {
  const head = `Step ${round}: the running total is ${round}, so I add 1 to it next.`;
  let text = head;
  while (text.length < chars) text += THINKING_FILLER;
  return text.slice(0, chars);
}

/** The text of the final answer (the last turn). */
export function finalAnswer(rounds: number): string {
  return `${thinkingText(rounds, AGENT_SCRIPT.thinkingChars)}\nDone: after ${rounds - 1} additions the final number is ${rounds}.`;
}

/**
 * The scripted conversation (CONTRACT section 7 turns): rounds 1..rounds-1 each carry ~200
 * characters of thinking text and one `add {a: i, b: 1}` call with usage figures; the last turn is
 * a plain answer. Both sides get a fresh `ScriptedChatModel` built from these same turns.
 */
export function buildAgentScript(rounds: number = AGENT_SCRIPT.rounds): ScriptedTurn[] {
  const turns: ScriptedTurn[] = [];
  const usage = (round: number) => ({
    input_tokens: AGENT_SCRIPT.firstInputTokens + AGENT_SCRIPT.inputTokensPerRound * (round - 1),
    output_tokens: AGENT_SCRIPT.outputTokens,
  });
  for (let round = 1; round < rounds; round++) {
    turns.push({
      content: thinkingText(round, AGENT_SCRIPT.thinkingChars),
      tool_calls: [{ name: "add", args: { a: round, b: 1 } }],
      usage: usage(round),
    });
  }
  turns.push({ content: finalAnswer(rounds), usage: usage(rounds) });
  return turns;
}
