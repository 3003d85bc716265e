// The running task's config, as LangGraph hands it to a node (through async context): what the run guards read.
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import type { GuardedThread } from "./run-fork-guard.js";

/** LangGraph's config of the task the caller runs in (`durability` and `checkpointDuring` as the run was invoked). */
export interface TaskConfig {
  durability?: unknown;
  checkpointDuring?: unknown;
  configurable: Record<string, unknown>;
}

/** The config of the running task when it is a task of a run of this saver's graph on the thread; else undefined. */
export function taskConfig(thread: GuardedThread): TaskConfig | undefined {
  const config = AsyncLocalStorageProviderSingleton.getRunnableConfig() as Partial<TaskConfig> | undefined;
  const configurable = config?.configurable;
  if (!configurable || configurable.__pregel_checkpointer !== thread.saver || configurable.thread_id !== thread.threadId) return undefined;
  return config as TaskConfig;
}
