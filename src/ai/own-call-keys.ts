// A loop's calls by id, tool and input: a model numbering its calls per response gives two loops' calls one id.
import type { JsonValue } from "../models/json.js";
import type { MessageInput } from "../models/types.js";
import { ownCallKey } from "../sessions/log/own-calls.js";
import { answerCallKeys } from "./answer-call-keys.js";
import { callInputsOf, callsOf } from "./chat.js";

/**
 * The keys (`ownCallKey`) of the calls the loop's earlier steps made, as the messages the AI SDK gives a step's calls
 * tell them: the `tool-call` parts of the assistant messages after the last user message (the request's question).
 * A step whose calls were all of other tools (a checkpoint tool, a tool not wrapped) is saved (`onStepEnd`) as an
 * answer naming none of the wrapped tools' calls; it is still the loop's answer, which the next call must follow.
 */
export function stepCallKeys(messages: unknown): string[] {
  if (!Array.isArray(messages)) return [];
  const keys: string[] = [];
  for (const m of messages as unknown[]) {
    if (typeof m !== "object" || m === null) continue;
    const { role, content } = m as { role?: unknown; content?: unknown };
    if (role === "user") keys.length = 0;
    if (role !== "assistant" || !Array.isArray(content)) continue;
    for (const part of content as unknown[]) {
      const { type, toolCallId, toolName, input } = (typeof part === "object" && part !== null ? part : {}) as Record<string, unknown>;
      if (type === "tool-call" && typeof toolCallId === "string" && typeof toolName === "string")
        keys.push(ownCallKey(toolCallId, toolName, input ?? null));
    }
  }
  return keys;
}

/** The keys of the calls each step made through wrapped tools, by the messages array the AI SDK gives all its calls. */
const stepKeys = new WeakMap<object, Set<string>>();

/** The keys of the calls made so far through wrapped tools in the step `messages` stands for (shared by every set). */
export function stepMadeKeys(messages: unknown): Set<string> {
  if (!Array.isArray(messages)) return new Set();
  let keys = stepKeys.get(messages);
  if (!keys) stepKeys.set(messages, (keys = new Set()));
  return keys;
}

/** The calls a stored form of an answer names, as `answerCallKeys` gives them (by key where its parts give inputs). */
export const formCallKeys = (form: { role: string; content: JsonValue }): string[] =>
  answerCallKeys([{ role: form.role, content: form.content } as MessageInput], { callsOf, callInputsOf });

/** Whether a call a form names (see `formCallKeys`) is one of `mine` (keys): by its key, or by id where it gives no input. */
export function namesMine(call: string, mine: ReadonlySet<string>): boolean {
  if (mine.has(call)) return true;
  if (call.includes("\u0000")) return false;
  for (const key of mine) if (key.startsWith(`${call}\u0000`)) return true;
  return false;
}
