// The forkpoint messages of a put's new items, the first naming the tool calls the new AI messages after it made.
// Under `durability: "exit"` LangGraph saves a run's messages only once the run ends, after the tool calls its nodes
// journaled through the thread's session: the input, written first, names them (`CAUSED_CALLS_KEY`), so an edit of it
// forks before them and undoes them. What the graph reads back is unchanged: it reads `metadata.langgraph` only.
import type { JsonObject, JsonValue } from "../models/json.js";
import type { MessageInput } from "../models/types.js";
import { CAUSED_CALLS_KEY } from "../sessions/edit-point.js";
import { toMessageInput } from "./messages.js";

/** The messages storing `serialized` (a put's new items), the first naming the calls of the AI messages after it. */
export function toMessageInputs(serialized: JsonValue[]): MessageInput[] {
  const inputs = serialized.map(toMessageInput);
  // A put of one message (each step's under "async"): its own calls are journaled after it has landed.
  if (inputs.length < 2) return inputs;
  const callIds = new Set<string>();
  for (const m of inputs.slice(1)) for (const id of toolCallIds(m)) callIds.add(id);
  if (callIds.size === 0) return inputs;
  return [{ ...inputs[0]!, metadata: { ...inputs[0]!.metadata, [CAUSED_CALLS_KEY]: [...callIds] } }, ...inputs.slice(1)];
}

/** The ids of a stored LangChain message's `tool_calls` (an AIMessage's; none for other items). */
function toolCallIds(m: MessageInput): string[] {
  const lg = (m.metadata as JsonObject | undefined)?.langgraph;
  if (typeof lg !== "object" || lg === null || Array.isArray(lg)) return [];
  const kwargs = lg.kwargs;
  if (typeof kwargs !== "object" || kwargs === null || Array.isArray(kwargs) || !Array.isArray(kwargs.tool_calls)) return [];
  const ids: string[] = [];
  for (const call of kwargs.tool_calls) {
    if (typeof call === "object" && call !== null && !Array.isArray(call) && typeof call.id === "string" && call.id !== "")
      ids.push(call.id);
  }
  return ids;
}
