// The README and the guides as a newcomer reads them: a short README that links every guide, links and anchors that
// resolve, repository paths that exist, and code blocks either run by tests/docs/examples.test.ts or marked `ts no-run`.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { codeBlocks, documents, noRun, repo, unmarked } from "./code-blocks.js";

/** The README is a quick start: at most 15 KB. */
const README_MAX_BYTES = 15 * 1024;
/** Blocks deliberately not run (internal code shown for its shape): kept this few. */
const NO_RUN_MAX = 2;

const docs = documents().map((doc) => ({ doc, text: readFileSync(join(repo, doc), "utf8") }));

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(markdown: string): Set<string> {
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, "");
  return new Set([...withoutCode.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

/** Markdown links and images outside code blocks: [text](target). */
function linksOf(markdown: string): string[] {
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
  return [...withoutCode.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
}

/** Whether a repository path exists; `*` matches within one path segment, and `<name>` stands for any directory. */
function pathExists(path: string): boolean {
  const parts = path.replace(/\/$/, "").split("/");
  let candidates = [repo];
  for (const part of parts) {
    const pattern =
      part.includes("*") || /^<.+>$/.test(part)
        ? new RegExp(
            `^${part
              .replace(/<[^>]+>/g, "*")
              .replace(/\./g, "\\.")
              .replace(/\*/g, "[^/]*")}$`,
          )
        : null;
    candidates = candidates.flatMap((dir) => {
      if (!pattern) return existsSync(join(dir, part)) ? [join(dir, part)] : [];
      if (!existsSync(dir) || !statSync(dir).isDirectory()) return [];
      return readdirSync(dir)
        .filter((name) => pattern.test(name))
        .map((name) => join(dir, name));
    });
  }
  return candidates.length > 0;
}

/** Paths into this repository that a document names, in code spans or blocks: src/…, tests/…, docs/…, and the like. */
function repoPathsOf(markdown: string): string[] {
  const found = markdown.matchAll(/(?<![\w./<>-])((?:src|tests|docs|bench|scripts|examples|drizzle|ui)\/[\w./<>*-]*[\w/*>])/g);
  return [...new Set([...found].map((m) => m[1]!))];
}

describe("the README and the guides", () => {
  it(`the README is at most ${README_MAX_BYTES} bytes and links every guide and the API reference`, () => {
    const readme = docs.find((d) => d.doc === "README.md")!.text;
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(README_MAX_BYTES);
    const linked = new Set(linksOf(readme));
    for (const { doc } of docs.filter((d) => d.doc !== "README.md")) expect(linked, doc).toContain(doc);
    expect(linked).toContain("docs/api/README.md");
  });

  it.each(docs)("$doc: every relative link and anchor resolves", ({ doc, text }) => {
    const broken: string[] = [];
    for (const link of linksOf(text)) {
      if (/^[a-z]+:/.test(link)) continue;
      const [target, anchor] = link.split("#") as [string, string | undefined];
      const file = target === "" ? join(repo, doc) : join(repo, dirname(doc), target);
      if (!existsSync(file)) broken.push(link);
      else if (anchor && file.endsWith(".md") && !anchorsOf(readFileSync(file, "utf8")).has(anchor)) broken.push(link);
    }
    expect(broken, `in ${doc}`).toEqual([]);
  });

  it.each(docs)("$doc: every repository path it names exists", ({ doc, text }) => {
    const missing = repoPathsOf(text).filter((p) => !pathExists(p));
    expect(missing, `in ${doc}`).toEqual([]);
  });

  it("code blocks are run, or marked `ts no-run`, and those are few", () => {
    const blocks = docs.flatMap(({ doc, text }) => codeBlocks(text).map((b) => ({ ...b, where: `${doc}:${b.line}` })));
    expect(blocks.filter(unmarked).map((b) => `${b.where} \`\`\`${b.info}`)).toEqual([]);
    const skipped = blocks.filter(noRun).map((b) => b.where);
    expect(skipped.length, `ts no-run blocks: ${skipped.join(", ")}`).toBeLessThanOrEqual(NO_RUN_MAX);
  });

  it("finds what it checks", () => {
    // The checks above pass vacuously if the helpers stop finding things: they must see links, paths and anchors.
    expect(pathExists("src/store/<db>/schema.ts")).toBe(true);
    expect(pathExists("src/store/schema.ts")).toBe(false);
    expect(pathExists("tests/tools/*.test.ts")).toBe(true);
    expect(repoPathsOf("see `src/store/sqlite/schema.ts` and tests/docs/ here")).toEqual(["src/store/sqlite/schema.ts", "tests/docs/"]);
    expect(slug("Retries, double clicks and other tabs")).toBe("retries-double-clicks-and-other-tabs");
    expect(slug("LangGraph.js: `ForkpointSaver`")).toBe("langgraphjs-forkpointsaver");
    expect(relative(repo, join(repo, "docs", "chat-apps.md"))).toBe("docs/chat-apps.md");
  });
});
