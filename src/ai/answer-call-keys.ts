// The calls an answer names, as a save looks for them after its question: by id, tool and input where its parts give them.
import type { MessageInput } from "../models/types.js";
import { ownCallKey } from "../sessions/log/own-calls.js";
import type { CallReading } from "./off-lineage.js";

/**
 * The calls `messages` name, each as `ownCallKey` where a part gives its tool and input, by bare id where none does (a
 * tool result alone): a model numbering its calls per response names another request's answer's calls with the same
 * ids, and only the inputs tell which branch holds this answer's.
 */
export function answerCallKeys(messages: readonly MessageInput[], options: CallReading): string[] {
  const ids = new Set(messages.flatMap((m) => options.callsOf?.(m) ?? []));
  const keys = new Map<string, string[]>();
  for (const m of messages) {
    for (const [id, value] of options.callInputsOf?.(m) ?? []) {
      if (!Array.isArray(value) || typeof value[0] !== "string" || !value[0].startsWith("tool-")) continue;
      keys.set(id, [...(keys.get(id) ?? []), ownCallKey(id, value[0].slice("tool-".length), value[1] ?? null)]);
    }
  }
  return [...ids].flatMap((id) => keys.get(id) ?? [id]);
}
