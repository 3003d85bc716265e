// A message's content as a list row previews it: its text on one line, cut to a bounded length.
import type { JsonValue } from "./json.js";

/** The longest preview, in JavaScript characters (UTF-16 code units), the "…" of a cut one included. */
export const PREVIEW_LENGTH = 200;

/** Part types whose `text` is what the message says (the AI SDK's, OpenAI's input and output, LangChain's). */
const TEXT_PARTS = new Set(["text", "input_text", "output_text"]);
/** Parts inside parts inside an item: deeper nesting is data, not a message's text. */
const MAX_DEPTH = 4;
/** Text gathered before stopping: a few previews' worth, so a long content is never walked (or copied) whole. */
const GATHER = PREVIEW_LENGTH * 4;

let graphemes: Intl.Segmenter | undefined;

/** The preview of `content` and whether it was cut (see `MessagePreview.preview`). */
export function previewOf(content: JsonValue): { preview: string; truncated: boolean } {
  const pieces: string[] = [];
  const gathered = { length: 0, more: false };
  gather(content, pieces, gathered, 0);
  const text = pieces.join(" ").replace(/\s+/g, " ").trim();
  if (text.length <= PREVIEW_LENGTH && !gathered.more) return { preview: text, truncated: false };
  // Cut between user-perceived characters: slicing UTF-16 units could leave half an emoji or a lone surrogate.
  graphemes ??= new Intl.Segmenter("en", { granularity: "grapheme" });
  let kept = "";
  for (const { segment } of graphemes.segment(text.slice(0, PREVIEW_LENGTH + 16))) {
    if (kept.length + segment.length > PREVIEW_LENGTH - 1) break;
    kept += segment;
  }
  return { preview: `${kept.trimEnd()}…`, truncated: true };
}

function gather(value: JsonValue, pieces: string[], gathered: { length: number; more: boolean }, depth: number): void {
  if (gathered.more) return;
  if (gathered.length >= GATHER) {
    gathered.more = hasText(value);
    return;
  }
  if (depth > MAX_DEPTH) return;
  if (typeof value === "string") {
    const piece = value.length > GATHER - gathered.length ? value.slice(0, GATHER - gathered.length) : value;
    gathered.more ||= piece.length < value.length;
    pieces.push(piece);
    gathered.length += piece.length;
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) gather(item, pieces, gathered, depth + 1);
    return;
  }
  if (value === null || typeof value !== "object") return;
  const type = value.type;
  if (typeof value.text === "string" && (type === undefined || (typeof type === "string" && TEXT_PARTS.has(type)))) {
    gather(value.text, pieces, gathered, depth + 1);
  } else if (value.content !== undefined) {
    gather(value.content, pieces, gathered, depth + 1);
  }
}

/** Whether `value` holds any text a preview would show (after the gathered text ran out: it was cut). */
function hasText(value: JsonValue): boolean {
  if (typeof value === "string") return /\S/.test(value);
  const probe: string[] = [];
  gather(value, probe, { length: 0, more: false }, 0);
  return probe.some((p) => /\S/.test(p));
}
