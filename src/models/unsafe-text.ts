// The characters a line of text must not show raw, one set for every place that prints user text on a line.

/**
 * Characters that a terminal acts on rather than shows, or that break or hide in a line: C0 controls (ESC, BEL, CR, …),
 * DEL, C1 controls (a lone CSI U+009B starts an escape sequence on some terminals), the line and paragraph separators,
 * and the bidirectional marks, overrides and isolates (Unicode's Bidi_Control set) that can make a line read
 * differently from what it holds ("Trojan Source"). A global pattern: `replace` every one.
 */
export const UNSAFE_TEXT = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** A name (a file's path) as a message shows it: as is, or as a JSON string when it holds a character of `UNSAFE_TEXT`. */
export const shownName = (name: string): string => (name.search(UNSAFE_TEXT) >= 0 ? JSON.stringify(name) : name);

/** The first ten of `names` for a message (each as `shownName` shows it), and how many more there are. */
export const shownNames = (names: readonly string[]): string =>
  names.slice(0, 10).map(shownName).join(", ") + (names.length > 10 ? `, and ${names.length - 10} more` : "");
