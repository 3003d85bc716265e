// User text inside text the page builds as one string (an option's label, an edge's label, a list joined by commas):
// wrapped in Unicode's isolates, so that a bidi control it holds (U+202E, ...) stays inside it. In markup, <bdi> does it.

/** `text` between FIRST STRONG ISOLATE (U+2068) and POP DIRECTIONAL ISOLATE (U+2069). */
export const isolate = (text: string): string => `\u2068${text}\u2069`;
