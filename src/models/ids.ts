// Readable, prefixed random ids: "ses_…", "br_…", "msg_…", "cp_…".
import { nanoid } from "nanoid";

export type IdKind = "ses" | "br" | "msg" | "st" | "tc" | "cp" | "mv";

export function newId(kind: IdKind): string {
  return `${kind}_${nanoid(16)}`;
}
