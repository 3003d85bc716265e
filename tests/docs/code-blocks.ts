// The code blocks of the README and the guides in docs/: which run, the program each document makes, what it must print.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const repo = resolve(import.meta.dirname, "../..");

/** The documents whose examples run: the README and every guide in docs/ (the generated API reference aside). */
export function documents(): string[] {
  const guides = readdirSync(join(repo, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`);
  return ["README.md", ...guides];
}

export interface CodeBlock {
  /** The fence's info string: `ts`, `ts no-run`, `sh`, ... */
  info: string;
  code: string;
  /** 1-based line of the opening fence. */
  line: number;
}

/** Every fenced block of a Markdown text, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== "```"; i++) body.push(lines[i]!);
    blocks.push({ info: open[1]!.trim(), code: body.join("\n") + "\n", line: start + 1 });
  }
  return blocks;
}

/** A TypeScript example that runs: fenced as exactly `ts`. `ts no-run` marks one that deliberately does not. */
export const runs = (block: CodeBlock): boolean => block.info === "ts";
export const noRun = (block: CodeBlock): boolean => block.info === "ts no-run";
/** Fences that look like code in a language the test would run, but are neither of the two above. */
export const unmarked = (block: CodeBlock): boolean =>
  /^(ts|tsx|typescript|js|javascript|mjs)\b/.test(block.info) && !runs(block) && !noRun(block);

export interface Program {
  /** The document's runnable blocks, in order, as one module. */
  source: string;
  blocks: number;
  /** What each `//=> text` comment says the line before it prints, in order of the source. */
  expected: string[];
}

/** A document's `ts` blocks as one program, as a reader runs them one after the other. */
export function programOf(doc: string): Program {
  const blocks = codeBlocks(readFileSync(join(repo, doc), "utf8")).filter(runs);
  const source = blocks.map((b) => b.code).join("\n");
  const expected = [...source.matchAll(/\/\/=> (.*)$/gm)].map((m) => m[1]!.trimEnd());
  return { source, blocks: blocks.length, expected };
}

/**
 * The lines of `expected` that `output` does not print in that order: each expected line must be a whole line of the
 * output, after the line the previous one matched.
 */
export function missingOutput(output: string, expected: string[]): string[] {
  const lines = output.split("\n").map((l) => l.trimEnd());
  const missing: string[] = [];
  let at = 0;
  for (const want of expected) {
    const found = lines.indexOf(want, at);
    if (found < 0) missing.push(want);
    else at = found + 1;
  }
  return missing;
}

/** Whether a program opens PostgreSQL itself (its examples read DATABASE_URL). */
export const needsPostgres = (program: Program): boolean => program.source.includes("process.env.DATABASE_URL");
