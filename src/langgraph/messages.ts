// How items of a LangGraph messages channel become forkpoint messages and back, exactly.
// An item arrives serialized (LangGraph's serializer: LangChain messages as `{ lc, type: "constructor", id, kwargs }`);
// what chat UIs read of it (role, text, the message's own id) goes into the message's fields, the rest into
// `metadata.langgraph`. A message written through forkpoint itself (`s.append`, `s.edit`) has no `metadata.langgraph`:
// the graph reads it as the LangChain message of its role.
import type { JsonObject, JsonValue } from "../models/json.js";
import type { Message, MessageInput } from "../models/types.js";

/** LangChain message classes and the roles forkpoint shows for them (other classes: the class name, lower case). */
const ROLES: Record<string, string> = {
  HumanMessage: "user",
  HumanMessageChunk: "user",
  AIMessage: "assistant",
  AIMessageChunk: "assistant",
  SystemMessage: "system",
  SystemMessageChunk: "system",
  ToolMessage: "tool",
  ToolMessageChunk: "tool",
  FunctionMessage: "function",
  FunctionMessageChunk: "function",
};

/**
 * The LangChain message a forkpoint message of each role is in the graph, with the fields LangChain's own
 * serialization writes for it (so the graph's next put gives back the very same item).
 */
const CLASSES: Record<string, { cls: string; fields: JsonObject }> = {
  user: { cls: "HumanMessage", fields: {} },
  assistant: { cls: "AIMessage", fields: { tool_calls: [], invalid_tool_calls: [] } },
  system: { cls: "SystemMessage", fields: {} },
  tool: { cls: "ToolMessage", fields: {} },
};

/** Roles and client ids are names: trimmed, non-empty, at most this long (see `Limits.maxStringField`'s default). */
const MAX_NAME = 512;
const isName = (v: unknown): v is string => typeof v === "string" && v.length > 0 && v.length <= MAX_NAME && v.trim() === v;
const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** A serialized LangChain message: its class path in `id`, its fields in `kwargs`. */
function lcMessage(item: JsonValue): { cls: string; kwargs: JsonObject } | undefined {
  if (!isObject(item) || item.lc !== 1 || item.type !== "constructor" || !Array.isArray(item.id) || !isObject(item.kwargs))
    return undefined;
  const cls = item.id[item.id.length - 1];
  if (typeof cls !== "string" || (!cls.endsWith("Message") && !cls.endsWith("MessageChunk")) || !("content" in item.kwargs))
    return undefined;
  return { cls, kwargs: item.kwargs };
}

/** The forkpoint message that stores one serialized item (`fromMessage` gives the same item back). */
export function toMessageInput(item: JsonValue): MessageInput {
  const lc = lcMessage(item);
  if (lc) {
    const { content, ...rest } = lc.kwargs;
    const role =
      lc.cls.startsWith("ChatMessage") && isName(rest.role) ? rest.role : (ROLES[lc.cls] ?? lc.cls.replace(/(Chunk)?$/, "").toLowerCase());
    const input: MessageInput = { role, content: content!, metadata: { langgraph: { ...(item as JsonObject), kwargs: rest } } };
    if (isName(rest.id)) input.clientId = rest.id;
    return input;
  }
  // A plain `{ role, content }` (what many graphs keep) is stored as is, marked as the graph's own plain item.
  if (isObject(item) && Object.keys(item).length === 2 && isName(item.role) && "content" in item) {
    return { role: item.role, content: item.content!, metadata: { langgraph: "plain" } };
  }
  return { role: "langgraph", content: item, metadata: { langgraph: "value" } };
}

/**
 * The serialized item a forkpoint message is in the graph's messages channel: the item it stores, or, for a message
 * written through forkpoint (no `metadata.langgraph`), the LangChain message of its role (user: HumanMessage,
 * assistant: AIMessage, system: SystemMessage, tool: ToolMessage, its `tool_call_id` from `metadata.tool_call_id`)
 * with its content and, as its id, its client id or else its forkpoint id. Other roles, or content LangChain does not
 * take (neither text nor a list of parts), are a plain `{ role, content }`.
 */
export function fromMessage(m: Pick<Message, "role" | "content" | "metadata"> & Partial<Pick<Message, "id" | "clientId">>): JsonValue {
  const lg = m.metadata?.langgraph;
  if (lg === "value") return m.content;
  if (isObject(lg) && isObject(lg.kwargs)) return { ...lg, kwargs: { content: m.content, ...lg.kwargs } };
  const lc = CLASSES[m.role];
  if (lg !== undefined || !lc || (typeof m.content !== "string" && !Array.isArray(m.content))) return { role: m.role, content: m.content };
  const kwargs: JsonObject = { content: m.content, ...lc.fields, additional_kwargs: {}, response_metadata: {} };
  const id = m.clientId ?? m.id;
  if (id !== undefined && id !== null) kwargs.id = id;
  if (m.role === "tool") {
    const callId = m.metadata?.tool_call_id;
    kwargs.tool_call_id = typeof callId === "string" ? callId : "";
  }
  return { lc: 1, type: "constructor", id: ["langchain_core", "messages", lc.cls], kwargs };
}
