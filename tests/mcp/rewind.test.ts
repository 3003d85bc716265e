// forkpoint mcp rewinds a workspace changed as a shell changes it (overwrites, deletes, new folders, build output),
// exactly; ignored and never-captured files stay as they are; undo and redo cross every checkpoint.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir } from "../helpers.js";
import { TRANSPORTS, call, connect, filesIn, lineOf, ok, refused, write, type Connected } from "./fixture.js";

let root: string;
let ws: string;
let db: string;
let server: Connected | undefined;

beforeEach(() => {
  root = makeTempDir("forkpoint-mcp-rewind-");
  ws = path.join(root, "project");
  db = path.join(root, "forkpoint.db");
  fs.mkdirSync(ws);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

const START = {
  "README.md": "# app\n",
  "src/app.ts": "export const answer = 41;\n",
  "src/util/strings.ts": "export const trim = (s: string) => s.trim();\n",
  "docs/old.md": "old notes\n",
};

/** What forkpoint must never capture nor touch: build output excluded at attach, and a git repository's own files. */
const IGNORED_BEFORE = { "build/app.js": "compiled 1\n", ".git/HEAD": "ref: refs/heads/main\n" };

/** A shell's doing: an overwrite, a deleted file and folder, new nested folders, a rename, and new build output. */
function changeAsAShellWould(): void {
  write(ws, "src/app.ts", "export const answer = 42;\n");
  fs.rmSync(path.join(ws, "README.md"));
  fs.rmSync(path.join(ws, "docs"), { recursive: true });
  write(ws, "src/feature/deep/nested/impl.ts", "export const feature = true;\n");
  write(ws, "tests/feature.test.ts", "test('feature', () => {});\n");
  fs.renameSync(path.join(ws, "src/util/strings.ts"), path.join(ws, "src/util/text.ts"));
  write(ws, "build/app.js", "compiled 2\n");
  write(ws, "build/feature.js", "compiled feature\n");
  write(ws, ".git/HEAD", "ref: refs/heads/feature\n");
}

const AFTER = {
  "src/app.ts": "export const answer = 42;\n",
  "src/feature/deep/nested/impl.ts": "export const feature = true;\n",
  "tests/feature.test.ts": "test('feature', () => {});\n",
  "src/util/text.ts": "export const trim = (s: string) => s.trim();\n",
};
const IGNORED_AFTER = {
  "build/app.js": "compiled 2\n",
  "build/feature.js": "compiled feature\n",
  ".git/HEAD": "ref: refs/heads/feature\n",
};

describe.each(TRANSPORTS)("over %s", (transport) => {
  it("rewinds overwrites, deletes and new folders exactly; ignored files stay; redo brings the later state back", async () => {
    for (const [rel, text] of Object.entries({ ...START, ...IGNORED_BEFORE })) write(ws, rel, text);
    server = await connect(transport, ["--workspace", ws, "--db", db, "--user", "alice", "--exclude", "build/"]);
    const { client } = server;

    const start = await ok(client, "checkpoint", { name: "before the feature" });
    expect(start.checkpoint).toMatchObject({ name: "before the feature", position: 1 });
    changeAsAShellWould();
    const after = await ok(client, "checkpoint", { name: "feature done" });
    expect(after.checkpoint.position).toBe(2);

    const diff = await ok(client, "diff", { from: "before the feature", to: after.checkpoint.id });
    expect(diff).toMatchObject({
      from: start.checkpoint.id,
      to: after.checkpoint.id,
      added: ["src/feature/deep/nested/impl.ts", "src/util/text.ts", "tests/feature.test.ts"],
      modified: ["src/app.ts"],
      deleted: ["README.md", "docs/old.md", "src/util/strings.ts"],
      patchTruncated: false,
    });
    expect(diff.patch).toContain("-export const answer = 41;\n+export const answer = 42;");

    const plan = await ok(client, "plan_rollback", { checkpoint: start.checkpoint.id });
    expect(plan).toMatchObject({
      restore: ["README.md", "docs/old.md", "src/app.ts", "src/util/strings.ts"],
      remove: ["src/feature/deep/nested/impl.ts", "src/util/text.ts", "tests/feature.test.ts"],
      uncheckpointed: [],
      lastCheckpointId: after.checkpoint.id,
      refusal: null,
    });

    const back = await ok(client, "rollback", { checkpoint: "before the feature" });
    expect(back.branch).toMatchObject({ parentId: after.checkpoint.branchId, forkPosition: 1, forkCheckpointId: start.checkpoint.id });
    expect(back.savedDrift).toBeNull();
    expect(filesIn(ws)).toEqual({ ...START, ...IGNORED_AFTER });

    // Undo takes the rollback back, redo makes it again: each checkpoint is a point of its own.
    const undone = await ok(client, "undo");
    expect(undone.branch.id).toBe(after.checkpoint.branchId);
    expect(filesIn(ws)).toEqual({ ...AFTER, ...IGNORED_AFTER });
    const redone = await ok(client, "redo");
    expect(redone.branch.id).toBe(back.branch.id);
    expect(filesIn(ws)).toEqual({ ...START, ...IGNORED_AFTER });

    // The later state stays on its branch: switching to it brings it back too.
    const listed = await ok(client, "branches");
    expect(listed.branches).toHaveLength(2);
    expect(listed.currentBranchId).toBe(back.branch.id);
    await ok(client, "switch_branch", { branch: after.checkpoint.branchId });
    expect(filesIn(ws)).toEqual({ ...AFTER, ...IGNORED_AFTER });

    const history = await ok(client, "history", { limit: 10 });
    expect(history.events.map((e: { kind: string }) => e.kind)).toEqual(["switch", "redo", "undo", "branch", "checkpoint", "checkpoint"]);
    expect(history.more).toBe(false);
  });

  it("lists checkpoints newest first, page by page", async () => {
    write(ws, "a.txt", "0\n");
    server = await connect(transport, ["--workspace", ws, "--db", db, "--user", "alice"]);
    const ids: string[] = [];
    for (let i = 1; i <= 3; i++) {
      write(ws, "a.txt", `${i}\n`);
      ids.push((await ok(server.client, "checkpoint", { name: `step ${i}` })).checkpoint.id);
    }
    const first = await ok(server.client, "list_checkpoints", { limit: 2 });
    expect(first.checkpoints.map((c: { id: string }) => c.id)).toEqual([ids[2], ids[1]]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await ok(server.client, "list_checkpoints", { limit: 2, cursor: first.nextCursor });
    expect(second).toEqual({ checkpoints: [expect.objectContaining({ id: ids[0], name: "step 1" })], nextCursor: null });
    // Rewinding to the first: the files of each step come back in turn.
    await ok(server.client, "rollback", { checkpoint: "step 1" });
    expect(fs.readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("1\n");
    await ok(server.client, "rollback", { checkpoint: ids[1] });
    expect(fs.readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("2\n");
    await ok(server.client, "undo");
    expect(fs.readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("1\n");
  });
});

describe("what the lines say", () => {
  it("a rollback to where the session is makes no branch, and claims nothing of undo", async () => {
    write(ws, "a.txt", "1\n");
    server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"]);
    const { client } = server;
    const one = (await ok(client, "checkpoint", { name: "one" })).checkpoint;
    write(ws, "a.txt", "2\n");
    await ok(client, "checkpoint", { name: "two" });
    const real = await call(client, "rollback", { checkpoint: "one" });
    expect(lineOf(real)).toMatch(/^Rolled back to .*\. undo \{\} takes it back\.$/);

    const again = await call(client, "rollback", { checkpoint: one.id });
    expect(again.isError ?? false).toBe(false);
    expect(lineOf(again)).toMatch(/^Already at cp_\S+ "one" on branch \S+ at position 1: no branch made; 0 files written, 0 deleted\.$/);
    expect(lineOf(again)).not.toContain("undo");
    expect((await ok(client, "branches")).branches).toHaveLength(2);
    // A second click: undo takes back the real rollback, the one before.
    await ok(client, "undo");
    expect(filesIn(ws)).toEqual({ "a.txt": "2\n" });
  });

  it("after a switch, a rollback to where the session is stays a move: the first undo stays, the next takes the switch back", async () => {
    write(ws, "a.txt", "1\n");
    server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"]);
    const { client } = server;
    const root = (await ok(client, "checkpoint", { name: "one" })).checkpoint.branchId;
    write(ws, "a.txt", "2\n");
    await ok(client, "checkpoint", { name: "two" });
    await ok(client, "rollback", { checkpoint: "one" });
    const side = (await ok(client, "branches")).currentBranchId;
    await ok(client, "switch_branch", { branch: root });
    const stay = await call(client, "rollback", { checkpoint: "two" });
    expect(lineOf(stay)).toMatch(/^Already at .*: no branch made; 0 files written, 0 deleted\.$/);
    expect((await ok(client, "undo")).branch.id).toBe(root);
    expect(filesIn(ws)).toEqual({ "a.txt": "2\n" });
    expect((await ok(client, "undo")).branch.id).toBe(side);
    expect(filesIn(ws)).toEqual({ "a.txt": "1\n" });
  });

  // Review 16: two clients rolling back at once; the second moved nothing and must say so.
  it("two rollbacks to one checkpoint at once: one rolls back, the other says it is already there", async () => {
    write(ws, "a.txt", "1\n");
    server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"]);
    const { client } = server;
    await ok(client, "checkpoint", { name: "one" });
    write(ws, "a.txt", "2\n");
    await ok(client, "checkpoint", { name: "two" });
    const both = await Promise.all([call(client, "rollback", { checkpoint: "one" }), call(client, "rollback", { checkpoint: "one" })]);
    expect(both.map((r) => lineOf(r).split(" ")[0]).sort()).toEqual(["Already", "Rolled"]);
    expect((await ok(client, "branches")).branches).toHaveLength(2);
  });

  it('history names the checkpoint a rollback went to; diff takes to: "disk"', async () => {
    write(ws, "a.txt", "1\n");
    server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"]);
    const { client } = server;
    const one = (await ok(client, "checkpoint", { name: "one" })).checkpoint;
    write(ws, "a.txt", "2\n");
    await ok(client, "checkpoint", { name: "two" });
    await ok(client, "rollback", { checkpoint: "one" });
    const history = await call(client, "history");
    const events = (history.structuredContent as { events: { kind: string; summary: string }[] }).events;
    expect(events.find((e) => e.kind === "branch")!.summary).toBe(`rollback to ${one.id} "one" at position 1`);
    expect(lineOf(history)).toContain(`rollback to ${one.id} "one" at position 1`);

    write(ws, "a.txt", "3\n");
    const toDisk = await ok(client, "diff", { from: "two", to: "disk" });
    expect(toDisk).toMatchObject({ to: "disk", modified: ["a.txt"] });
    expect(await ok(client, "diff", { from: "two" })).toEqual(toDisk);
    expect(await refused(client, "diff", { from: "two", to: "nope" })).toMatch(/^NOT_FOUND: /);
  });

  it("file names with line breaks, bidi overrides or other control characters stay on the line, quoted", async () => {
    const names = [
      "new\nline.txt",
      "carriage\rreturn.txt",
      "tab\there.txt",
      "sep\u2028arator.txt",
      "rtl\u202eoverride.txt",
      "alm\u061cmark.txt",
      "plain.txt",
    ];
    for (const n of names) write(ws, n, "1\n");
    server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"]);
    const { client } = server;
    await ok(client, "checkpoint", { name: "one" });
    for (const n of names) write(ws, n, "2\n");
    for (const r of [
      await call(client, "diff", { from: "one" }),
      await call(client, "plan_rollback", { checkpoint: "one" }),
      await call(client, "rollback", { checkpoint: "one" }),
      await call(client, "rollback", { checkpoint: "one", force: true }),
    ]) {
      const line = lineOf(r);
      expect(line).not.toMatch(/[\n\r\t\u2028\u202e\u061c]/);
      expect(line).toContain(String.raw`"alm\u061cmark.txt"`);
      expect(line).toContain(String.raw`"new\nline.txt"`);
      expect(line).toContain(String.raw`"carriage\rreturn.txt"`);
      expect(line).toContain(String.raw`"rtl\u202eoverride.txt"`);
    }
    const diff = await ok(client, "diff", { from: "one", to: "disk" });
    expect(diff.modified).toEqual([]);
  });
});
