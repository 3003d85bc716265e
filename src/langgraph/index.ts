// forkpoint/langgraph: the LangGraph.js checkpointer on a forkpoint database.
export { ForkpointSaver, type ForkpointSaverOptions } from "./forkpoint-saver.js";
export type { PruneStrategy, PruneThreadsOptions } from "./prune.js";
