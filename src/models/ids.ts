// Readable, prefixed ids that sort by creation: "ses_…", "br_…", "msg_…", "cp_…".
// Time-ordered ids append at the end of their index instead of landing on a random page:
// fewer pages written per commit, which is most of the cost of a write.
import { customAlphabet } from "nanoid";

export type IdKind = "ses" | "br" | "msg" | "st" | "tc" | "cp" | "mv";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";
const random = customAlphabet(ALPHABET, 10);
/** The counter is 3 base-36 digits. */
const MAX_COUNTER = 36 ** 3 - 1;
let lastMillis = 0;
let counter = 0;

/**
 * A new id of `kind`. Ids made by one process sort in the order they were made whatever the clock does: the time
 * part never goes back (a clock stepped back by NTP or by hand keeps the last time and counts on), and a counter
 * that runs out within one millisecond moves the time part on by one.
 */
export function newId(kind: IdKind): string {
  const now = Date.now();
  if (now > lastMillis) {
    lastMillis = now;
    counter = 0;
  } else if (counter < MAX_COUNTER) {
    counter++;
  } else {
    lastMillis++;
    counter = 0;
  }
  // 9 base-36 digits of milliseconds last until the year 5188; the counter keeps ids ordered within one.
  return `${kind}_${lastMillis.toString(36).padStart(9, "0")}${counter.toString(36).padStart(3, "0")}${random()}`;
}
