// User text inside text the page builds as one string (an option's label, an edge's label, a list joined by commas):
// wrapped in Unicode's isolates, so that a bidi control it holds (U+202E, ...) stays inside it. In markup, <Bdi> does it.
import { createElement, type ReactNode } from "react";

const OPENS = new Set(["\u2066", "\u2067", "\u2068"]); // LRI, RLI, FSI
const PDI = "\u2069";

/**
 * Paragraph separators (Unicode's bidi class B): each ends the paragraph, closing every isolate around it, so an
 * override after it would reverse the page's own text. A line feed is the one a <bdi> holds (the page breaks the line
 * there, preserving white space or not); every other is shown as a line feed (a carriage return, with the line feed
 * after it; U+2029; U+0085) or as its control picture (U+001C–U+001E: ␜ ␝ ␞).
 */
const PARAGRAPH_ENDS = /\r\n?|[\u2029\u0085\u001c-\u001e]/g;
const shownEnd = (end: string): string => (/^[\r\u2029\u0085]/.test(end) ? "\n" : String.fromCharCode(0x2400 + end.charCodeAt(0)));

/**
 * `text` without what would let it out of the isolate around it (a <bdi>'s or `isolate`'s): the POP DIRECTIONAL
 * ISOLATEs that close no isolate it opened, and paragraph separators. After either, an override would reverse the
 * page's own text.
 */
export function contained(text: string): string {
  text = text.replace(PARAGRAPH_ENDS, shownEnd);
  if (!text.includes(PDI)) return text;
  let open = 0;
  let out = "";
  for (const ch of text) {
    if (OPENS.has(ch)) open++;
    else if (ch === PDI) {
      if (open === 0) continue;
      open--;
    }
    out += ch;
  }
  return out;
}

/**
 * `text` between FIRST STRONG ISOLATE (U+2068) and POP DIRECTIONAL ISOLATE (U+2069), on one line: these isolates do
 * not hold a line feed either where white space is preserved.
 */
export const isolate = (text: string): string => `\u2068${contained(text).replaceAll("\n", " ")}\u2069`;

/** A <bdi> whose text children are `contained`: user text shown in markup. */
export function Bdi(props: { className?: string; children?: ReactNode }): ReactNode {
  const clean = (child: ReactNode): ReactNode => (typeof child === "string" ? contained(child) : child);
  const children: ReactNode[] = Array.isArray(props.children) ? props.children.map(clean) : [clean(props.children)];
  return createElement("bdi", { className: props.className }, ...children);
}
