// The running task's config, as LangGraph hands it to a node (through async context): what the run guards read.
import { AsyncLocalStorage } from "node:async_hooks";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import type { GuardedThread } from "./run-fork-guard.js";

// LangGraph's main entry sets up the async context that carries a task's config; an app that imports only its
// `/prebuilt` entry never loads it, and without it no task is seen (the guards would be off). Once only, as LangGraph does.
AsyncLocalStorageProviderSingleton.initializeGlobalInstance(new AsyncLocalStorage());

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
