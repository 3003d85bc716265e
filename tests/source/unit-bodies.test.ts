// Units of work are module-level generator functions: V8 moves whatever a generator closure made per call captures
// into the old generation, so per-call `function* (tx) { ... }` bodies raised peak memory by a quarter (docs/units.md).
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
// TypeScript 7 (the native compiler) ships no compiler API; its 6.0 API comes as a package of its own.
import ts from "@typescript/typescript6";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
// Verify's and prune's slices keep running state between chunks by design, once per chunk of many entries.
const ALLOWED = ["src/sessions/maintenance/"];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return d.name === "ui" ? [] : sources(path);
    return d.name.endsWith(".ts") ? [path] : [];
  });
}

/** Generator function expressions, and generator declarations nested in a function: closures made per call. */
function generatorClosures(file: string, text = readFileSync(file, "utf8")): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node, inFunction: boolean) => {
    const generator = (ts.isFunctionExpression(node) || ts.isFunctionDeclaration(node)) && node.asteriskToken !== undefined;
    const async = ts.canHaveModifiers(node) && ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.AsyncKeyword);
    if (generator && !async && (ts.isFunctionExpression(node) || inFunction)) {
      found.push(`${relative(ROOT, file)}:${sf.getLineAndCharacterOfPosition(node.getStart()).line + 1}`);
    }
    ts.forEachChild(node, (child) => visit(child, inFunction || ts.isFunctionLike(node)));
  };
  visit(sf, false);
  return found;
}

describe("unit bodies", () => {
  it("are module-level generator functions, not closures made per call", () => {
    const files = sources(join(ROOT, "src")).filter((f) => !ALLOWED.some((a) => relative(ROOT, f).startsWith(a)));
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap((f) => generatorClosures(f))).toEqual([]);
  });

  it("finds a generator closure when there is one", () => {
    const probe = join(ROOT, "src/probe.ts");
    const text = [
      "export function* unit(tx: Tx) { return 1; }",
      "export async function f(s: S) {",
      "  function* nested() {}",
      "  return s.read(function* (tx) { return 1; });",
      "}",
    ].join("\n");
    expect(generatorClosures(probe, text)).toEqual(["src/probe.ts:3", "src/probe.ts:4"]);
  });
});
