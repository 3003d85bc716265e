// turn: messages and a checkpoint after them, in one transaction.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ValidationError, type Checkpoint } from "../../src/index.js";
import { makeTempDir, rejectionOf, removeDir, rowDelta, tempDatabases } from "../helpers.js";
import { countRowsOf, dumpOf, onPostgres, sqlOn } from "../fixtures/backend.js";

const dbs = tempDatabases();

describe("turn", () => {
  it("appends the messages and checkpoints right after them, returning both", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "system", content: "be brief" });
    const t = await s.turn(
      [
        { role: "user", content: "hi" },
        { role: "assistant", content: { text: "hello" } },
      ],
      { name: "turn 1", metadata: { n: 1 } },
    );
    expect(t.messages.map((m) => [m.position, m.role, m.content])).toEqual([
      [2, "user", "hi"],
      [3, "assistant", { text: "hello" }],
    ]);
    expect(t.checkpoint).toMatchObject({ position: 3, name: "turn 1", metadata: { n: 1 }, auto: false, sessionId: s.id, userId: "alice" });
    const restored = await s.restore(t.checkpoint.id);
    expect(restored.history.map((m) => m.id)).toEqual([...(await s.history()).map((m) => m.id)]);
    expect(restored.history).toHaveLength(3);
    // A rollback to the turn's checkpoint lands right after its messages.
    const back = await s.rollback(t.checkpoint.id);
    expect(back.branch.head).toBe(3);
  });

  it("takes one message or an array, and the checkpoint options are optional", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const t = await s.turn({ role: "user", content: "one" });
    expect(t.messages).toHaveLength(1);
    expect(t.checkpoint).toMatchObject({ position: 1, name: null, metadata: null, expiresAt: null });
  });

  it("adds exactly the entries and one checkpoint row", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const before = await countRowsOf(path);
    await s.turn(
      [
        { role: "user", content: "a" },
        { role: "assistant", content: "b" },
      ],
      { name: "t" },
    );
    const delta = rowDelta(before, await countRowsOf(path));
    expect(Object.fromEntries(Object.entries(delta).filter(([, n]) => n !== 0))).toEqual({ entries: 2, checkpoints: 1 });
  });

  it("emits the auto checkpoints its messages trigger, then its own, in order", async () => {
    const { fp } = dbs.open({ autoCheckpoint: { everyMessages: 1 } });
    const s = await fp.createSession({ userId: "alice" });
    const seen: Checkpoint[] = [];
    fp.on("checkpoint", (cp) => seen.push(cp));
    const t = await s.turn(
      [
        { role: "user", content: "a" },
        { role: "assistant", content: "b" },
      ],
      { name: "mine" },
    );
    expect(seen.map((cp) => [cp.position, cp.auto])).toEqual([
      [1, true],
      [2, true],
      [2, false],
    ]);
    expect(seen[2]!.id).toBe(t.checkpoint.id);
  });

  it("refuses bad messages or bad checkpoint options with a ValidationError and writes nothing", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const before = await dumpOf(path);
    const badMessage = await rejectionOf(
      s.turn(
        [
          { role: "user", content: "ok" },
          { role: "", content: "x" },
        ],
        { name: "t" },
      ),
    );
    expect(badMessage).toBeInstanceOf(ValidationError);
    expect(badMessage.message).toContain("messages[1].role");
    const badOptions = await rejectionOf(s.turn({ role: "user", content: "ok" }, { name: "t", expiresIn: "soon" } as never));
    expect(badOptions).toBeInstanceOf(ValidationError);
    expect(badOptions.message).toContain("expiresIn");
    const unknownKey = await rejectionOf(s.turn({ role: "user", content: "ok" }, { label: "t" } as never));
    expect(unknownKey).toBeInstanceOf(ValidationError);
    expect(unknownKey.message).toMatch(/checkpoint.*label/);
    expect(await dumpOf(path)).toEqual(before);
  });

  it("is atomic: when the checkpoint cannot be written, the messages are not either", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "kept" });
    // A real failure inside the transaction, after the messages are written: the database refuses the checkpoint row.
    await sqlOn(
      path,
      onPostgres
        ? `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$;
          CREATE TRIGGER refuse_checkpoints BEFORE INSERT ON checkpoints FOR EACH ROW EXECUTE FUNCTION refuse()`
        : `CREATE TRIGGER refuse_checkpoints BEFORE INSERT ON checkpoints BEGIN SELECT RAISE(ABORT, 'refused'); END`,
    );
    const before = await dumpOf(path);
    const error = await rejectionOf(
      s.turn(
        [
          { role: "user", content: "lost" },
          { role: "assistant", content: "lost" },
        ],
        { name: "t" },
      ),
    );
    expect(error.message).toContain("refused");
    expect(await dumpOf(path)).toEqual(before);
    expect((await s.history()).map((m) => m.content)).toEqual(["kept"]);
    await sqlOn(path, `DROP TRIGGER refuse_checkpoints${onPostgres ? " ON checkpoints" : ""}`);
    const t = await s.turn({ role: "user", content: "again" }, { name: "t" });
    expect(t.checkpoint.position).toBe(2);
  });

  it("captures an attached workspace's files with its checkpoint, like checkpoint()", async () => {
    const dir = makeTempDir("forkpoint-turn-ws-");
    try {
      const { fp, path: file } = dbs.open();
      const s = await fp.createSession({ userId: "alice" });
      fs.writeFileSync(path.join(dir, "md"), "one\n");
      await s.attachWorkspace(dir);
      const before = await countRowsOf(file);
      const t = await s.turn({ role: "user", content: "wrote the plan" }, { name: "t" });
      // The files are read outside the transaction, which is then run again: the message is written once.
      expect((await s.history()).map((m) => m.id)).toEqual([t.messages[0]!.id]);
      const delta = rowDelta(before, await countRowsOf(file));
      // The message, and the capture of the files as an entry of its own (so the checkpoint has its own position).
      expect(delta).toMatchObject({ entries: 2, checkpoints: 1, checkpoint_files: 1 });
      expect(await s.diffFiles(t.checkpoint.id, "disk")).toEqual({ added: [], modified: [], deleted: [], patch: "" });
      fs.writeFileSync(path.join(dir, "md"), "two\n");
      expect((await s.diffFiles(t.checkpoint.id, "disk")).modified).toEqual(["md"]);
    } finally {
      removeDir(dir);
    }
  });
});
