// Workspaces on real directories: checkpoints capture files, diffFiles compares them, moves with scope "files" /
// "both" restore them, and files changed outside forkpoint (drift) are never overwritten.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ConflictError,
  IntegrityError,
  NotFoundError,
  ValidationError,
  defineTool,
  type Forkpoint,
  type SessionHandle,
} from "../../src/index.js";
import { filesUnder, makeTempDir, rejectionOf, removeDir, restoringWriteTool } from "../helpers.js";
import { countRowsOf, dumpOf, onPostgres, openForkpoint, sqlOn } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let dbFile: string;
let fp: Forkpoint;

const write = (rel: string, text: string | Buffer) => {
  const full = path.join(ws, rel);
  fs.mkdirSync(path.dirname(full), { recursive: true });
  fs.writeFileSync(full, text);
};
const read = (rel: string) => (fs.existsSync(path.join(ws, rel)) ? fs.readFileSync(path.join(ws, rel), "utf8") : null);
/** Every file under the workspace but the database's, with its text. */
const tree = () => filesUnder(ws, dbFile);

beforeEach(() => {
  dir = makeTempDir("forkpoint-ws-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  // The database lives inside the workspace on purpose: its own files must never be captured.
  dbFile = path.join(ws, "forkpoint.db");
  fp = openForkpoint({ path: dbFile, tools: [restoringWriteTool(ws)] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

async function attached(): Promise<SessionHandle> {
  write("README.md", "hello\n");
  write("src/app.ts", "export const a = 1;\n");
  write("debug.log", "noise");
  write("node_modules/x/index.js", "module");
  const s = await fp.createSession({ userId: "u" });
  const info = await s.attachWorkspace(ws, { exclude: ["*.log", "node_modules/"] });
  expect(info).toEqual({ dir: ws, exclude: ["*.log", "node_modules/"], files: 2 });
  return s;
}

describe("attachWorkspace and diffFiles", () => {
  it("checkpoints capture the files; diffFiles lists and patches the changes to the disk or another checkpoint", async () => {
    const s = await attached();
    await s.append({ role: "user", content: "edit the app" });
    const cp1 = await s.checkpoint({ name: "before" });
    write("src/app.ts", "export const a = 2;\n");
    write("src/new.ts", "new\n");
    fs.rmSync(path.join(ws, "README.md"));
    write("debug.log", "more noise");
    const d = await s.diffFiles(cp1.id, "disk");
    expect([d.added, d.modified, d.deleted]).toEqual([["src/new.ts"], ["src/app.ts"], ["README.md"]]);
    expect(d.patch).toContain("--- a/src/app.ts\n+++ b/src/app.ts");
    expect(d.patch).toContain("-export const a = 1;\n+export const a = 2;");
    expect(d.patch).toContain("--- /dev/null\n+++ b/src/new.ts");
    expect(d.patch).toContain("--- a/README.md\n+++ /dev/null");
    const cp2 = await s.checkpoint({ name: "after" });
    expect(await s.diffFiles(cp1.id, cp2.id)).toEqual(d);
    expect(await s.diffFiles(cp2.id)).toEqual({ added: [], modified: [], deleted: [], patch: "" });
  });

  it("stores each content once, and names binary files in the patch", async () => {
    const s = await attached();
    const cp1 = await s.checkpoint();
    const blobs = (await countRowsOf(dbFile)).file_blobs;
    await s.checkpoint();
    await s.checkpoint();
    expect((await countRowsOf(dbFile)).file_blobs).toBe(blobs);
    write("img.bin", Buffer.from([0, 1, 2, 3]));
    expect((await s.diffFiles(cp1.id)).patch).toBe("Binary files /dev/null and b/img.bin differ\n");
  });

  it("refuses bad input and checkpoints without files, leaving the database unchanged", async () => {
    const s = await attached();
    const bare = await fp.createSession({ userId: "u" });
    const noFiles = await bare.checkpoint();
    const before = await dumpOf(dbFile);
    expect((await rejectionOf(s.attachWorkspace(path.join(ws, "README.md")))).field).toBe("dir");
    expect((await rejectionOf(s.attachWorkspace(path.join(dir, "missing")))).field).toBe("dir");
    expect((await rejectionOf(s.attachWorkspace(ws, { exclude: [""] }))).field).toBe("exclude.0");
    expect(await rejectionOf(s.attachWorkspace(ws, { globs: [] } as never))).toBeInstanceOf(ValidationError);
    expect((await rejectionOf(bare.diffFiles(noFiles.id))).field).toBe("diffFiles"); // no workspace yet
    expect(await rejectionOf(s.diffFiles("cp_nope"))).toBeInstanceOf(NotFoundError);
    expect(await rejectionOf(s.diffFiles(noFiles.id))).toBeInstanceOf(NotFoundError); // another session's
    expect(await dumpOf(dbFile)).toEqual(before);
    await bare.attachWorkspace(ws);
    expect((await rejectionOf(bare.diffFiles(noFiles.id))).field).toBe("checkpointId");
  });

  it("leaves a file over the size limit out of a checkpoint, and says so", async () => {
    await fp.close();
    fp = openForkpoint({ path: dbFile, limits: { maxPayloadBytes: 1000 } });
    const s = await fp.createSession({ userId: "u" });
    write("small.txt", "ok");
    await s.attachWorkspace(ws);
    write("big.txt", "x".repeat(5000));
    const cp = await s.checkpoint();
    expect(cp.skipped).toEqual([{ path: "big.txt", reason: "is 5000 bytes, over the limit of 1000" }]);
    expect((await fp.listCheckpoints({ userId: "u" })).items[0]).not.toHaveProperty("skipped");
  });
});

describe("moves with a scope", () => {
  it("scope 'files' restores the checkpoint's files and leaves the conversation where it is", async () => {
    const s = await attached();
    await s.append({ role: "user", content: "one" });
    const cp = await s.checkpoint({ name: "one" });
    const files = tree();
    await s.append({ role: "user", content: "two" });
    write("src/app.ts", "changed");
    write("src/deep/new.ts", "new");
    fs.rmSync(path.join(ws, "README.md"));
    await s.checkpoint({ name: "two" });
    const history = await s.history();
    const r = await s.rollback(cp.id, { scope: "files" });
    expect(r.files).toEqual({ written: ["README.md", "src/app.ts"], deleted: ["src/deep/new.ts"] });
    expect([r.undone, r.replayed]).toEqual([[], []]);
    expect(await s.history()).toEqual(history);
    expect(tree()).toEqual({ ...files, "debug.log": "noise", "node_modules/x/index.js": "module" });
  });

  it("restores a file whose name is near the file system's 255-byte limit (staged under a short name)", async () => {
    const s = await attached();
    const long = `src/${"n".repeat(250)}.ts`;
    write(long, "first");
    const cp = await s.checkpoint({ name: "first" });
    write(long, "second");
    await s.checkpoint({ name: "second" });
    const r = await s.rollback(cp.id, { scope: "files" });
    expect(r.files).toEqual({ written: [long], deleted: [] });
    expect(read(long)).toBe("first");
    expect(fs.readdirSync(path.join(ws, "src")).sort()).toEqual(["app.ts", "n".repeat(250) + ".ts"]);
  });

  it("never overwrites files changed outside forkpoint since it last saw them (WORKSPACE_DRIFT); a checkpoint keeps them", async () => {
    const s = await attached();
    const cp = await s.checkpoint({ name: "start" });
    write("src/app.ts", "hand edit");
    const before = await dumpOf(dbFile);
    const e = await rejectionOf(s.rollback(cp.id, { scope: "both" }));
    expect(e).toBeInstanceOf(ConflictError);
    expect(e.code).toBe("WORKSPACE_DRIFT");
    expect(e.message).toContain("src/app.ts");
    expect(read("src/app.ts")).toBe("hand edit");
    expect(await dumpOf(dbFile)).toEqual(before);
    write("debug.log", "excluded files are not drift");
    const kept = await s.checkpoint({ name: "hand edit kept" });
    await s.rollback(cp.id, { scope: "files" });
    expect(read("src/app.ts")).toBe("export const a = 1;\n");
    await s.rollback(kept.id, { scope: "files" });
    expect(read("src/app.ts")).toBe("hand edit");
  });

  it("scope 'both' moves the conversation, undoes tools, and restores the files; a tool's writes are not drift", async () => {
    const s = await attached();
    await s.append({ role: "user", content: "start" });
    const cp = await s.checkpoint({ name: "start" });
    await s.invoke("write_file", { rel: "src/app.ts", text: "by the tool" });
    await s.append({ role: "assistant", content: "done" });
    const r = await s.rollback(cp.id, { scope: "both" });
    expect(r.undone.map((t) => t.tool)).toEqual(["write_file"]);
    // The undo runs first, on the file it wrote: the snapshot's files are then already there.
    expect(r.files).toEqual({ written: [], deleted: [] });
    expect((await s.history()).map((m) => m.content)).toEqual(["start"]);
    expect(read("src/app.ts")).toBe("export const a = 1;\n");
    // Back to the branch with the tool call: files set to that lineage's newest snapshot ("start"), then the call
    // made after it is replayed on top: the directory matches the branch's head.
    await s.checkpoint({ name: "on the new branch" });
    const root = (await s.branches()).find((b) => b.parentId === null)!;
    const back = await s.switchBranch(root.id, { scope: "both" });
    expect(back.replayed.map((t) => t.tool)).toEqual(["write_file"]);
    expect(read("src/app.ts")).toBe("by the tool");
    // The replay's write is forkpoint's own: no drift for the next move.
    await s.rollback(cp.id, { scope: "files" });
    expect(read("src/app.ts")).toBe("export const a = 1;\n");
  });

  it("refuses scope 'files' without a workspace, or without any snapshot on the target's lineage", async () => {
    const s = await fp.createSession({ userId: "u" });
    const early = await s.checkpoint();
    expect((await rejectionOf(s.rollback(early.id, { scope: "files" }))).field).toBe("scope");
    write("a.txt", "a");
    await s.attachWorkspace(ws);
    const e = await rejectionOf(s.rollback(early.id, { scope: "files" }));
    expect(e).toBeInstanceOf(ValidationError);
    expect(e.message).toContain("no checkpoint");
    expect(read("a.txt")).toBe("a");
  });

  it("never writes damaged stored content: verify reports it and the restore throws IntegrityError", async () => {
    const s = await attached();
    const cp = await s.checkpoint({ name: "start" });
    write("src/app.ts", "changed");
    await s.checkpoint({ name: "changed" });
    await sqlOn(dbFile, `UPDATE file_blobs SET content = $1 WHERE content = $2`, [Buffer.from([0]), Buffer.from("export const a = 1;\n")]);
    const report = await fp.verify({ sessionId: s.id });
    expect(report.problems).toContainEqual({
      kind: "checkpoint",
      id: cp.id,
      detail: "its file src/app.ts is missing or does not match its hash",
    });
    expect(await rejectionOf(s.rollback(cp.id, { scope: "files" }))).toBeInstanceOf(IntegrityError);
    expect(read("src/app.ts")).toBe("changed");
  });

  it("restores a snapshot only to the directory and exclude list it was read under", async () => {
    const s = await attached();
    const cp = await s.checkpoint({ name: "project" });
    const other = path.join(dir, "thesis");
    fs.mkdirSync(other);
    fs.writeFileSync(path.join(other, "thesis.tex"), "chapter 1");
    await s.attachWorkspace(other);
    const e = await rejectionOf(s.rollback(cp.id, { scope: "files" }));
    expect(e).toBeInstanceOf(ValidationError);
    expect(fs.readFileSync(path.join(other, "thesis.tex"), "utf8")).toBe("chapter 1");
    expect(await rejectionOf(s.diffFiles(cp.id))).toBeInstanceOf(ValidationError);
  });

  it("never writes through a symbolic link, and refuses before changing anything", async () => {
    const s = await attached();
    const cp = await s.checkpoint({ name: "start" });
    const outside = path.join(dir, "outside.txt");
    fs.writeFileSync(outside, "precious");
    await s.invoke("write_file", { rel: "src/app.ts", text: "x" }); // forkpoint's own change
    fs.rmSync(path.join(ws, "src"), { recursive: true });
    fs.symlinkSync(dir, path.join(ws, "src")); // hand-made: src/ now leads outside
    const e = await rejectionOf(s.rollback(cp.id, { scope: "files" }));
    expect(e).toBeInstanceOf(ConflictError);
    expect(fs.readFileSync(outside, "utf8")).toBe("precious");
    expect(read("README.md")).toBe("hello\n");
  });

  it("a hand edit stays drift even after a tool call or a move that did not touch it", async () => {
    const s = await attached();
    const cp = await s.checkpoint({ name: "start" });
    write("README.md", "hand edit");
    await s.invoke("write_file", { rel: "src/app.ts", text: "by the tool" });
    await s.rollback(cp.id); // conversation only: undoes the tool's write
    const e = await rejectionOf(s.rollback(cp.id, { scope: "files" }));
    expect(e.code).toBe("WORKSPACE_DRIFT");
    expect(e.message).toContain("README.md");
    expect(e.message).not.toContain("src/app.ts");
    expect(read("README.md")).toBe("hand edit");
  });

  it("checks every stored content before moving anything: a damaged one leaves conversation and files as they were", async () => {
    const s = await attached();
    await s.append({ role: "user", content: "one" });
    const cp = await s.checkpoint({ name: "start" });
    write("src/app.ts", "changed");
    await s.append({ role: "user", content: "two" });
    await s.checkpoint({ name: "changed" });
    // A content the rollback writes (it writes only the files that differ: README.md's stored copy is not read).
    await sqlOn(dbFile, `UPDATE file_blobs SET content = $1 WHERE content = $2`, [Buffer.from([0]), Buffer.from("export const a = 1;\n")]);
    const branches = (await s.branches()).length;
    expect(await rejectionOf(s.rollback(cp.id, { scope: "both" }))).toBeInstanceOf(IntegrityError);
    expect((await s.branches()).length).toBe(branches);
    expect((await s.history()).map((m) => m.content)).toEqual(["one", "two"]);
    expect(read("src/app.ts")).toBe("changed");
  });

  it("deleting and pruning checkpoints with files works, and prune drops contents nothing holds", async () => {
    const s = await attached();
    const a = await s.checkpoint({ name: "a" });
    write("big.txt", "only in b");
    const b = await s.checkpoint({ name: "b", expiresIn: 1 });
    fs.rmSync(path.join(ws, "big.txt"));
    await s.checkpoint({ name: "c" });
    await s.deleteCheckpoint(a.id);
    await new Promise((r) => setTimeout(r, 5));
    const report = await fp.prune({ vacuum: false });
    expect(report.checkpoints).toBe(1);
    expect(report.files).toBeGreaterThan(0);
    expect(await sqlOn(dbFile, `SELECT count(*) AS n FROM file_blobs WHERE content = $1`, [Buffer.from("only in b")])).toEqual([{ n: 0 }]);
    expect(await fp.verify()).toMatchObject({ ok: true });
    void b;
  });

  it("a tool call still resolves to its result when the files cannot be read afterwards", async () => {
    await fp.close();
    const grow = defineTool<{ n: number }, { n: number }>({
      name: "grow",
      run: async ({ n }) => (write("big.txt", "x".repeat(n)), { n }),
      undo: async () => {},
    });
    fp = openForkpoint({ path: dbFile, tools: [grow], limits: { maxPayloadBytes: 100 } });
    const s = await fp.createSession({ userId: "u" });
    write("a.txt", "a");
    await s.attachWorkspace(ws);
    expect(await s.invoke("grow", { n: 500 })).toEqual({ n: 500 }); // big.txt is now over the limit: not absorbed
    expect((await s.toolTrack()).map((t) => t.status)).toEqual(["succeeded"]);
  });
});

describe("two openers of one file moving one workspace", () => {
  it("two files rollbacks at once: one after the other, or one refused, and the directory is the one restored last", async () => {
    const s1 = await attached();
    write("a.txt", "0");
    const cp0 = await s1.checkpoint({ name: "cp0" });
    write("a.txt", "1");
    write("x.txt", "x");
    const cp1 = await s1.checkpoint({ name: "cp1" });
    write("a.txt", "2");
    await s1.checkpoint({ name: "cp2" });
    const other = openForkpoint({ path: dbFile, tools: [restoringWriteTool(ws)] });
    try {
      const s2 = await other.getSession(s1.id, { userId: "u" });
      const moves = [
        { s: s1, cp: cp0, files: ["0", null] },
        { s: s2, cp: cp1, files: ["1", "x"] },
      ];
      const settled = await Promise.allSettled(moves.map((m) => m.s.rollback(m.cp.id, { scope: "files" })));
      if (settled.every((r) => r.status === "fulfilled")) {
        // A fast move can end before the other claims the session (on PostgreSQL), or while the other plans its files
        // (which then plans again on what it left): both run, one after the other, and the directory is the one the
        // later restored, recorded so that the next move finds no drift.
        const last = moves.find((m) => m.files[0] === read("a.txt"))!;
        expect([read("a.txt"), read("x.txt")]).toEqual(last.files);
        expect((await s1.diffFiles(last.cp.id, "disk")).modified).toEqual([]);
        return;
      }
      // SQLite runs the first call's transaction at once; on PostgreSQL the two race for the session's lock.
      const won = settled.findIndex((r) => r.status === "fulfilled");
      expect(won).toBe(onPostgres ? won : 0);
      const [winner, loser] = won === 0 ? moves : [moves[1]!, moves[0]!];
      expect(settled.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
      expect((settled[1 - won] as PromiseRejectedResult).reason).toBeInstanceOf(ConflictError);
      // The other's restore is forkpoint's own doing: never reported as changed outside it.
      expect((settled[1 - won] as PromiseRejectedResult).reason).not.toMatchObject({ code: "WORKSPACE_DRIFT" });
      expect([read("a.txt"), read("x.txt")]).toEqual(winner!.files);
      // What forkpoint recorded is what the directory holds: the next move finds no drift.
      expect((await s1.diffFiles(winner!.cp.id, "disk")).modified).toEqual([]);
      await loser!.s.rollback(loser!.cp.id, { scope: "files" });
      expect([read("a.txt"), read("x.txt")]).toEqual(loser!.files);
    } finally {
      await other.close();
    }
  });

  it("a files rollback to a checkpoint that another opener deletes and prunes meanwhile still leaves a workspace that moves", async () => {
    for (let ticks = 0; ticks <= 4; ticks++) {
      const s1 = await fp.createSession({ userId: "u" });
      write("a.txt", "0");
      await s1.attachWorkspace(ws);
      write("a.txt", "X");
      const cpX = await s1.checkpoint({ name: "X" });
      write("a.txt", "Y");
      const cpY = await s1.checkpoint({ name: "Y" });
      const other = openForkpoint({ path: dbFile });
      try {
        const s2 = await other.getSession(s1.id, { userId: "u" });
        // On a slow server the delete can win the race before the move reads its checkpoint: then the move is refused
        // and the files stay; either way the workspace moves on. (The refusal is handled as soon as the move starts:
        // it may come while the delete is still awaited.)
        const moving = s1.rollback(cpX.id, { scope: "files" }).then(
          () => true,
          (error: unknown) => {
            if (error instanceof NotFoundError) return false;
            throw error;
          },
        );
        for (let i = 0; i < ticks; i++) await Promise.resolve();
        await Promise.all([s2.deleteCheckpoint(cpX.id), other.prune({ vacuum: false })]);
        const moved = await moving;
        expect(read("a.txt")).toBe(moved ? "X" : "Y");
        await s1.rollback(cpY.id, { scope: "files" });
        expect(read("a.txt")).toBe("Y");
      } finally {
        await other.close();
      }
    }
  });
});
