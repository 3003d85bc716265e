// A loop's own calls among those following a message: by id, and by tool and input where the loop knows them.
import type { EntryRow } from "../../store/port/index.js";
import { canonicalJson } from "../integrity/hashes.js";

/**
 * The key of a call by id, tool and input: a model numbering its calls per response (`call_0` in every response) gives
 * two loops' calls one id, which their inputs tell apart. A loop gives its calls by key where it knows their input, by
 * bare id otherwise.
 */
export const ownCallKey = (id: string, tool: string, args: unknown): string => `${id}\u0000${tool}\u0000${canonicalJson(args)}`;

/** Whether call `entry` is one of `own`: its id given bare, or with its tool and input. */
export function isOwnCall(own: ReadonlySet<string>, entry: Pick<EntryRow, "callId" | "tool" | "content">): boolean {
  if (entry.callId === null) return false;
  if (own.has(entry.callId)) return true;
  if (entry.tool === null || entry.content === null) return false;
  return own.has(ownCallKey(entry.callId, entry.tool, JSON.parse(entry.content)));
}
