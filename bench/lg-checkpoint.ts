// A chat turn's checkpoint as LangGraph's Pregel loop writes it: shared by every LangGraph saver the bench drives
// (SqliteSaver and ForkpointSaver in peer-langgraph.ts, PostgresSaver in pg-chat.ts and pg-writers.ts).
import { uuid6, type Checkpoint } from "@langchain/langgraph-checkpoint";

export interface Msg {
  role: string;
  content: string;
}

/** A checkpoint as LangGraph's Pregel loop writes it after `step`: the messages channel holds the whole list. */
export function makeCheckpoint(step: number, messages: Msg[]): Checkpoint {
  return {
    v: 4,
    id: uuid6(step),
    ts: new Date().toISOString(),
    channel_values: { messages },
    channel_versions: { __start__: step + 1, messages: step + 1 },
    versions_seen: { __input__: {}, agent: { messages: step } },
  };
}

/** The channels a turn's checkpoint changed (what LangGraph passes as `newVersions`). */
export const NEW_VERSIONS = (step: number) => ({ __start__: step + 1, messages: step + 1 });
