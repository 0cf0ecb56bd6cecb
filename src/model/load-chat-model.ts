import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { DevmindConfig } from "../config.js";
import { scriptedModelFromFile } from "./scripted-model.js";

/**
 * `createChatModel(config)` (same model, same errors), loading LangChain's OpenAI client only for
 * an OpenAI-compatible model: a scripted model (the demo's, the tests') does not pay for the
 * client's ~230 modules (about 0.3 s of CPU per process).
 */
export async function loadChatModel(config: DevmindConfig): Promise<BaseChatModel> {
  if (config.model?.provider === "scripted") return scriptedModelFromFile(config.model.path);
  const { createChatModel } = await import("./create-chat-model.js");
  return createChatModel(config);
}
