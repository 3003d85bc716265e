// How the CLI prints: stored text with its control characters escaped, aligned tables, colour on a TTY, times.
import { createRequire } from "node:module";
import type CliTable from "cli-table3";
import picocolors from "picocolors";
import { UNSAFE_TEXT } from "../models/unsafe-text.js";

// cli-table3 (CommonJS, with string-width's tables) is required by the first table, not at startup: --help needs none.
const require = createRequire(import.meta.url);
let Table: typeof CliTable | undefined;

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** `text` with every character a terminal would act on written as a visible escape (`\x1b`, `\n`, `\u202e`). */
export function escapeText(text: string): string {
  return text.replace(UNSAFE_TEXT, (ch) => {
    const named = NAMED[ch];
    if (named) return named;
    const code = ch.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/**
 * What a terminal acts on that JSON.stringify leaves raw (it escapes only C0 controls): written as `\uXXXX` escapes,
 * which a JSON parser reads back as the same characters. Outside strings JSON has only ASCII, so the whole text can
 * be scanned.
 */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** `value` as JSON that is exact (it parses back to `value`) and safe to print on a terminal. */
export function terminalSafeJson(value: unknown, indent?: number): string {
  return (JSON.stringify(value, null, indent) ?? "null").replace(
    UNSAFE_IN_JSON,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

let graphemes: Intl.Segmenter | undefined;

/** A stored JSON value as one escaped line: strings as they are, anything else as compact JSON. */
export function inline(value: unknown, max = 0): string {
  const text = escapeText(typeof value === "string" ? value : (JSON.stringify(value) ?? "null"));
  if (max <= 0 || text.length <= max) return text;
  // Cut between user-perceived characters: slicing UTF-16 units could leave half an emoji (printed as U+FFFD).
  graphemes ??= new Intl.Segmenter("en", { granularity: "grapheme" });
  let kept = "";
  for (const { segment } of graphemes.segment(text)) {
    if (kept.length + segment.length > max - 1) break;
    kept += segment;
  }
  return `${kept}…`;
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 24 * 3600_000],
  ["month", 30 * 24 * 3600_000],
  ["week", 7 * 24 * 3600_000],
  ["day", 24 * 3600_000],
  ["hour", 3600_000],
  ["minute", 60_000],
  ["second", 1000],
];
const relative = new Intl.RelativeTimeFormat("en", { numeric: "auto" });

/** "3 minutes ago" (the largest whole unit), or "now" under a second. */
export function relativeTime(date: Date, now = Date.now()): string {
  const ms = date.getTime() - now;
  for (const [unit, size] of UNITS) {
    if (Math.abs(ms) >= size) return relative.format(Math.trunc(ms / size), unit);
  }
  return relative.format(0, "second");
}

/** Text the CLI made itself (already escaped or styled): a table prints it as it is. */
export class Raw {
  constructor(readonly text: string) {}
}
/** A table cell: stored text (escaped when printed), a number, our own `Raw` text, or null ("-"). */
export type Cell = string | number | Raw | null;

/** What a command prints through: stdout lines, and how (JSON, colour, relative times). */
export interface Output {
  readonly json: boolean;
  /** Colours: on a TTY, never with NO_COLOR. Picocolors' functions, no-ops when off. */
  readonly c: ReturnType<typeof picocolors.createColors>;
  /** One line on standard output. */
  line(text?: string): void;
  /** A date as people read it here: relative on a TTY, absolute ISO 8601 when piped. */
  time(date: Date | null): string;
  /** Prints `value` as JSON with --json, else the lines `text()` returns. */
  print(value: unknown, text: () => string[]): void;
  /** Rows as an aligned table with a header; every cell is escaped (cells are stored, untrusted text). */
  table(head: string[], rows: Cell[][]): string[];
}

export interface OutputOptions {
  json: boolean;
  write: (line: string) => void;
  /** Whether standard output is a terminal. */
  tty: boolean;
  env: NodeJS.ProcessEnv;
}

function cellText(cell: Cell): string {
  if (cell === null) return "-";
  if (cell instanceof Raw) return cell.text;
  return typeof cell === "number" ? String(cell) : escapeText(cell);
}

export function createOutput(o: OutputOptions): Output {
  // https://no-color.org: any non-empty value turns colour off; TERM=dumb declares a terminal without escapes.
  const colour = o.tty && !o.env.NO_COLOR && o.env.TERM !== "dumb";
  const c = picocolors.createColors(colour);
  const out: Output = {
    json: o.json,
    c,
    line: (text = "") => o.write(text),
    time: (date) => (date === null ? "-" : o.tty ? relativeTime(date) : date.toISOString()),
    print(value, text) {
      if (o.json) o.write(terminalSafeJson(value, 2));
      else for (const line of text()) o.write(line);
    },
    table(head, rows) {
      Table ??= require("cli-table3") as typeof CliTable;
      const table = new Table({
        head: head.map((h) => c.bold(h)),
        chars: {
          top: "",
          "top-mid": "",
          "top-left": "",
          "top-right": "",
          bottom: "",
          "bottom-mid": "",
          "bottom-left": "",
          "bottom-right": "",
          left: "",
          "left-mid": "",
          mid: "",
          "mid-mid": "",
          right: "",
          "right-mid": "",
          middle: "  ",
        },
        style: { head: [], border: [], "padding-left": 0, "padding-right": 0 },
      });
      for (const row of rows) table.push(row.map(cellText));
      return table
        .toString()
        .split("\n")
        .map((l) => l.trimEnd());
    },
  };
  return out;
}
