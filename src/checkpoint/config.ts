import type { RunnableConfig } from "@langchain/core/runnables";
import { CheckpointError } from "../errors.js";

/** The identifying part of a LangGraph config. */
export interface CheckpointAddress {
  threadId: string;
  namespace: string;
  checkpointId: string | undefined;
}

/**
 * Reads thread id, namespace and checkpoint id from `config.configurable`. A missing
 * `configurable` or `thread_id` is a CHECKPOINT_CONFIG_INVALID error (LangGraph needs
 * `configurable.thread_id` for every persisted run).
 */
export function readAddress(config: RunnableConfig, operation: string): CheckpointAddress {
  const configurable = config?.configurable;
  if (configurable === undefined || configurable === null) {
    throw new CheckpointError("CHECKPOINT_CONFIG_INVALID", `${operation}: config.configurable is missing; pass { configurable: { thread_id } }`, {
      details: { operation },
    });
  }
  const threadId = configurable["thread_id"];
  if (threadId === undefined || threadId === null || threadId === "") {
    throw new CheckpointError("CHECKPOINT_CONFIG_INVALID", `${operation}: config.configurable.thread_id is missing`, {
      details: { operation, field: "thread_id" },
    });
  }
  const namespace = configurable["checkpoint_ns"];
  const checkpointId = configurable["checkpoint_id"] ?? configurable["thread_ts"];
  return {
    threadId: String(threadId),
    namespace: namespace === undefined || namespace === null ? "" : String(namespace),
    checkpointId: checkpointId === undefined || checkpointId === null || checkpointId === "" ? undefined : String(checkpointId),
  };
}

/** Like `readAddress`, but a missing `checkpoint_id` is also an error (putWrites). */
export function readCheckpointAddress(config: RunnableConfig, operation: string): CheckpointAddress & { checkpointId: string } {
  const address = readAddress(config, operation);
  if (address.checkpointId === undefined) {
    throw new CheckpointError("CHECKPOINT_CONFIG_INVALID", `${operation}: config.configurable.checkpoint_id is missing`, {
      details: { operation, field: "checkpoint_id" },
    });
  }
  return { ...address, checkpointId: address.checkpointId };
}

/** The config LangGraph expects back for a stored checkpoint. */
export function checkpointConfig(threadId: string, namespace: string, checkpointId: string): RunnableConfig {
  return { configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: checkpointId } };
}
