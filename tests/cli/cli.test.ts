// The forkpoint CLI over a real database: listings, history, branches, rollback, export/import, verify and prune.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProgram, main } from "../../src/cli/main.js";
import { openForkpoint } from "../../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "forkpoint-cli-"));
const db = join(dir, "cli.db");
let sessionId = "";
let checkpointId = "";
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(async () => {
  const fp = openForkpoint({ path: db });
  const s = await fp.createSession({ userId: "ann", title: "CLI test" });
  await s.append([{ role: "user", content: "hello" }, { role: "assistant", content: { parts: ["hi"] } }]);
  checkpointId = (await s.checkpoint({ name: "greeted" })).id;
  await s.append({ role: "user", content: "more" });
  sessionId = s.id;
  await fp.close();
});

async function cli(...args: string[]): Promise<string[]> {
  const lines: string[] = [];
  await buildProgram((l) => lines.push(l)).parseAsync(["node", "forkpoint", "--db", db, ...args]);
  return lines;
}

describe("forkpoint CLI", () => {
  it("lists a user's sessions and checkpoints", async () => {
    expect((await cli("sessions", "-u", "ann")).join("\n")).toContain("CLI test");
    expect((await cli("checkpoints", "-u", "ann", "--name", "greeted"))[0]).toContain(checkpointId);
    expect(await cli("sessions", "-u", "nobody")).toEqual([]);
  });

  it("summarizes a session, as text and as JSON", async () => {
    const text = await cli("summary", sessionId, "-u", "ann");
    expect(text[0]).toMatch(new RegExp(`^${sessionId}  CLI test  updated `));
    expect(text[1]).toMatch(/^branches\s+1; current br_\S+ at position 3, 3 messages$/);
    expect(text[2]).toBe("last message user: more");
    expect(text[3]).toMatch(new RegExp(`^checkpoints\\s+1; latest ${checkpointId} greeted `));
    expect(text[4]).toBe("tool calls   0 (0 succeeded, 0 failed, 0 running; 0 applied)");
    const json = JSON.parse((await cli("--json", "summary", sessionId, "-u", "ann")).join("\n"));
    expect(json).toMatchObject({ branches: 1, checkpoints: 1, position: 3, messages: 3, lastMessage: { content: "more" } });
  });

  it("prints history, rolls back, and shows the new branch in the tree", async () => {
    expect(await cli("history", sessionId, "-u", "ann")).toHaveLength(3);
    const rolled = await cli("rollback", sessionId, checkpointId, "-u", "ann");
    expect(rolled[0]).toMatch(/now on branch br_\S+ at position 2/);
    expect(await cli("history", sessionId, "-u", "ann")).toHaveLength(2);
    const tree = await cli("branches", sessionId, "-u", "ann");
    expect(tree).toHaveLength(2);
    expect(tree[1]).toMatch(/^\s+br_\S+\s+rollback at 2, head 2\s+\*current$/);
  });

  it("prints JSON with --json", async () => {
    const page = JSON.parse((await cli("--json", "checkpoints", "-u", "ann")).join("\n"));
    expect(page.items[0].id).toBe(checkpointId);
    expect(page.nextCursor).toBeNull();
  });

  it("reports typed errors with their code and exit code 1", async () => {
    const errors: string[] = [];
    const original = console.error;
    console.error = (line: string) => errors.push(line);
    try {
      await main(["node", "forkpoint", "--db", db, "history", sessionId, "-u", "mallory"]);
    } finally {
      console.error = original;
    }
    expect(errors[0]).toBe(`error NOT_FOUND: session not found: "${sessionId}"`);
    expect(process.exitCode).toBe(1);
    process.exitCode = 0;
  });

  it("exports a session to a file and imports it into another database for another user", async () => {
    const file = join(dir, "export.json");
    expect(await cli("export", sessionId, "-u", "ann", "--out", file)).toEqual([]);
    const printed = (await cli("export", sessionId, "-u", "ann")).join("");
    expect(readFileSync(file, "utf8")).toBe(printed);
    const other = join(dir, "other.db");
    const lines: string[] = [];
    await buildProgram((l) => lines.push(l)).parseAsync(["node", "forkpoint", "--db", other, "import", file, "-u", "bea"]);
    expect(lines).toEqual([`imported session ${sessionId} for bea`]);
    const fp = openForkpoint({ path: other });
    try {
      const copy = await fp.getSession(sessionId, { userId: "bea" });
      expect((await copy.history()).map((m) => m.content)).toEqual(["hello", { parts: ["hi"] }]);
    } finally {
      await fp.close();
    }
    writeFileSync(join(dir, "broken.json"), "{ not json");
    await expect(cli("import", join(dir, "broken.json"), "-u", "bea")).rejects.toMatchObject({ code: "VALIDATION_ERROR", field: "file" });
  });

  it("verifies and prunes the database", async () => {
    expect(await cli("verify")).toEqual(["ok: 1 session(s) verified"]);
    const report = JSON.parse((await cli("--json", "prune", "--no-vacuum")).join("\n"));
    expect(report).toMatchObject({ checkpoints: 0, snapshots: 0, moves: 0 });
    expect((await cli("prune"))[0]).toBe("deleted 0 expired checkpoint(s), 0 unreferenced state(s), 0 finished move journal(s)");
  });

  it("an export to a path it cannot write is a typed error, and nothing is written", async () => {
    const out = join(dir, "no-such-dir", "doc.json");
    await expect(cli("export", sessionId, "-u", "ann", "--out", out)).rejects.toMatchObject({ code: "VALIDATION_ERROR", field: "out" });
  });
});

describe("the forkpoint command as npm installs it (a symlink to the program)", () => {
  const repo = fileURLToPath(new URL("../..", import.meta.url));
  const run = (...args: string[]) => {
    const link = join(dir, "bin-forkpoint.ts");
    if (!existsSync(link)) symlinkSync(join(repo, "src/cli/main.ts"), link);
    return spawnSync(process.execPath, ["--import", "tsx", link, "--db", db, ...args], { cwd: repo, encoding: "utf8" });
  };

  it("runs: help, a listing, and an unknown command (one line of error, exit 1)", () => {
    const help = run("--help");
    expect([help.status, help.stdout]).toEqual([0, expect.stringContaining("Usage: forkpoint")]);
    const listed = run("sessions", "-u", "ann");
    expect([listed.status, listed.stdout]).toEqual([0, expect.stringContaining("CLI test")]);
    const bogus = run("bogus");
    expect(bogus.status).toBe(1);
    expect(bogus.stderr.trim().split("\n")).toEqual(["error: unknown command 'bogus'"]);
  });

  it("an export to a path it cannot write: one line of error, exit 1, no stack", () => {
    const failed = run("export", sessionId, "-u", "ann", "--out", join(dir, "no-such-dir", "doc.json"));
    expect(failed.status).toBe(1);
    expect(failed.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^error VALIDATION_ERROR: out: cannot write .*no-such-dir/)]);
  });
});
