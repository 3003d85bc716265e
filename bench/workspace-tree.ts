// A generated source tree for the workspace bench: deterministic code-like text (a seeded generator), an ignored
// node_modules, and the edits each checkpoint round makes. The same seed gives the same bytes on every machine.
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";

/** A small, fast seeded generator (mulberry32). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = ["get", "set", "user", "item", "list", "map", "node", "tree", "load", "save", "parse", "read", "write", "token"];
const MORE = ["cache", "state", "value", "index", "key", "path", "file", "line", "row", "page", "view", "form", "field", "event"];
const TAIL = ["", "s", "Id", "At", "By", "For", "Of", "Map", "List", "Count", "Size", "Name", "Type", "Info", "Data", "Ref"];
const TYPES = ["string", "number", "boolean", "unknown", "Date", "Buffer", "Uint8Array", "Record<string, number>", "string[]"];
const KEYWORDS = ["const", "let", "return", "await", "if", "for", "while", "throw", "switch", "try"];
const WORDS = (
  "the a of to and is in that for it on with as be this by are or from at not an which but can has all if will one " +
  "when we there more their so what about out up into than them only other new some time could these two may then do " +
  "first any my now such like our over also back after use how most state cache read write call value file path tree"
).split(" ");

/** Identifiers of a code base: a vocabulary of compound names, drawn with a Zipf-like skew (a few names dominate). */
function vocabulary(rand: () => number, size: number): string[] {
  const names = new Set<string>();
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  while (names.size < size) {
    // 14 × 14 × 16 compounds, then a numbered family of each once those run out.
    const name = pick(SYLLABLES) + cap(pick(MORE)) + pick(TAIL);
    names.add(names.has(name) && rand() < 0.5 ? `${name}${Math.floor(rand() * 50)}` : name);
  }
  return [...names];
}
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** One generated source file of about `target` bytes. */
function sourceFile(rand: () => number, names: string[], target: number, header: string): string {
  const zipf = () => names[Math.floor(names.length * Math.pow(rand(), 2.2))]!;
  const int = (n: number) => Math.floor(rand() * n);
  const parts: string[] = [header];
  for (let i = 0, n = 2 + int(8); i < n; i++) {
    parts.push(`import { ${zipf()}, ${zipf()} } from "../${zipf()}/${zipf()}.js";\n`);
  }
  parts.push("\n");
  let size = parts.reduce((s, p) => s + p.length, 0);
  while (size < target) {
    let block: string;
    const kind = int(10);
    if (kind < 2) {
      const fields = Array.from({ length: 2 + int(6) }, () => `  ${zipf()}${rand() < 0.3 ? "?" : ""}: ${TYPES[int(TYPES.length)]};\n`);
      block = `export interface ${cap(zipf())} {\n${fields.join("")}}\n\n`;
    } else if (kind < 3) {
      const words = Array.from({ length: 8 + int(20) }, () => WORDS[int(WORDS.length)]).join(" ");
      block = `/**\n * ${cap(words)}.\n */\n`;
    } else {
      const args = Array.from({ length: int(4) }, () => `${zipf()}: ${TYPES[int(TYPES.length)]}`).join(", ");
      const lines: string[] = [];
      for (let j = 0, m = 3 + int(14); j < m; j++) {
        const indent = "  ".repeat(1 + int(3));
        const kw = KEYWORDS[int(KEYWORDS.length)]!;
        const line =
          kw === "const" || kw === "let"
            ? `${kw} ${zipf()} = ${zipf()}(${zipf()}, ${int(1000)});`
            : kw === "if" || kw === "while"
              ? `${kw} (${zipf()} ${rand() < 0.5 ? ">" : "==="} ${int(100)}) ${zipf()}.${zipf()}();`
              : kw === "for"
                ? `for (const ${zipf()} of ${zipf()}.${zipf()}) ${zipf()}.push(${zipf()});`
                : kw === "throw"
                  ? `throw new Error("${WORDS[int(WORDS.length)]} ${zipf()} ${WORDS[int(WORDS.length)]}");`
                  : `${kw} ${zipf()}.${zipf()}(${zipf()});`;
        lines.push(indent + line);
      }
      block = `export ${rand() < 0.3 ? "async " : ""}function ${zipf()}${int(100)}(${args}): ${TYPES[int(TYPES.length)]} {\n${lines.join("\n")}\n}\n\n`;
    }
    parts.push(block);
    size += block.length;
  }
  return parts.join("");
}

/** The shape of a generated tree. */
export interface TreeSpec {
  files: number;
  /** Files under the ignored `node_modules/`. */
  ignored: number;
  seed: number;
}

/** The relative paths of the tracked files, in generation order (directories of about 15 files, 1–4 levels deep). */
export function trackedPaths(spec: TreeSpec): string[] {
  const rand = seeded(spec.seed ^ 0x51ed);
  const paths: string[] = [];
  let dir = 0;
  while (paths.length < spec.files) {
    const depth = 1 + Math.floor(rand() * 4);
    // Ancestors shared with other directories (from the directory's number), then a leaf of its own.
    const parts = ["src"];
    for (let d = 0; d < depth - 1; d++)
      parts.push(`${["core", "ui", "api", "lib", "util", "model", "store"][d % 7]}${Math.floor(dir / 7 ** (d + 1)) % 7}`);
    parts.push(`mod${dir}`);
    const count = 8 + Math.floor(rand() * 15);
    for (let i = 0; i < count && paths.length < spec.files; i++) paths.push(`${parts.join("/")}/m${dir}_${i}.ts`);
    dir++;
  }
  return paths;
}

/** A file size drawn from a log-normal around 5.5 KB (the 165 MB over 30,000 files), 200 B to 200 KB. */
function fileSize(rand: () => number): number {
  const normal = Math.sqrt(-2 * Math.log(rand() || 1e-9)) * Math.cos(2 * Math.PI * rand());
  return Math.max(200, Math.min(200_000, Math.round(3900 * Math.exp(0.75 * normal))));
}

/** Writes the tree under `root` (file by file: memory stays small); returns the tracked paths and their total bytes. */
export function generateTree(root: string, spec: TreeSpec): { paths: string[]; bytes: number } {
  const rand = seeded(spec.seed);
  const names = vocabulary(rand, 4000);
  const headers = Array.from(
    { length: 6 },
    (_, i) => `// Copyright ${2019 + i} the ${names[i]} authors. Licensed under the MIT License.\n`,
  );
  const paths = trackedPaths(spec);
  const made = new Set<string>();
  const put = (rel: string, text: string) => {
    const full = join(root, rel);
    const d = dirname(full);
    if (!made.has(d)) (mkdirSync(d, { recursive: true }), made.add(d));
    const fd = openSync(full, "w");
    writeSync(fd, text);
    closeSync(fd);
  };
  let bytes = 0;
  for (const rel of paths) {
    const text = sourceFile(rand, names, fileSize(rand), headers[Math.floor(rand() * headers.length)]!);
    bytes += Buffer.byteLength(text);
    put(rel, text);
  }
  for (let i = 0; i < spec.ignored; i++) {
    put(`node_modules/pkg${i % 400}/lib/f${i}.js`, sourceFile(rand, names, 1500 + Math.floor(rand() * 3000), headers[0]!));
  }
  writeFileSync(join(root, ".gitignore"), "node_modules/\n*.log\n");
  return { paths, bytes };
}

/**
 * Round `round`'s edits: `count` tracked files, each with a line inserted and one changed (a coding agent's edit), chosen
 * by the round's seed. Returns the paths edited.
 */
export function editFiles(root: string, paths: readonly string[], round: number, count: number): string[] {
  const rand = seeded(0xed17 + round * 7919);
  const chosen = new Set<string>();
  while (chosen.size < Math.min(count, paths.length)) chosen.add(paths[Math.floor(rand() * paths.length)]!);
  for (const rel of chosen) {
    const full = join(root, rel);
    const lines = readFileSync(full, "utf8").split("\n");
    const at = Math.floor(rand() * lines.length);
    lines.splice(at, 0, `  // round ${round}: ${Math.floor(rand() * 1e9).toString(36)}`);
    const other = Math.floor(rand() * lines.length);
    lines[other] = `${lines[other]} // edited in round ${round}`;
    writeFileSync(full, lines.join("\n"));
  }
  return [...chosen];
}
