// The engine on PostgreSQL through the public API: sessions, checkpoints, rollback with tool undo, edit and versions,
// export moving between stores with every hash intact, and two handles (two app servers) writing one session at once.
import { describe, expect, it } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { defineTool, openForkpoint } from "../../src/index.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { answersOutOfBranchOrder, lastVersions } from "../fixtures/versions-across-branches.js";

const url = await pgServer();

describe.skipIf(!url)("forkpoint on PostgreSQL", () => {
  it("creates, appends, checkpoints, rolls back (undoing a tool's file) and edits", async () => {
    const dir = makeTempDir();
    const writeFile = defineTool({
      name: "write_file",
      run: async (args: { name: string; text: string }) => {
        fs.writeFileSync(path.join(dir, args.name), args.text);
        return { written: args.name };
      },
      undo: async ({ args }) => fs.rmSync(path.join(dir, (args as { name: string }).name)),
    });
    const fp = openForkpoint({ postgres: await freshPgDatabase(), tools: [writeFile] });
    try {
      const s = await fp.createSession({ userId: "alice", title: "Trip" });
      const [hi] = await s.append({ role: "user", content: "hi" });
      await s.setState({ city: "Lisbon" });
      const cp = await s.checkpoint({ name: "before" });
      await s.invoke("write_file", { name: "a.txt", text: "A" });
      expect(fs.existsSync(path.join(dir, "a.txt"))).toBe(true);
      const moved = await s.rollback(cp.id);
      expect(moved.undone.map((t) => t.tool)).toEqual(["write_file"]);
      expect(fs.existsSync(path.join(dir, "a.txt"))).toBe(false);
      expect(await s.getState()).toEqual({ city: "Lisbon" });
      const edited = await s.edit(hi!.id, { role: "user", content: "hello" });
      const v = await s.versions(edited.message.id);
      expect([v.index, v.count]).toEqual([1, 2]);
      expect((await s.branches()).length).toBe(3);
      expect((await fp.listCheckpoints({ userId: "alice" })).items.map((c) => c.name)).toEqual(["before"]);
      await expect(fp.getSession(s.id, { userId: "bob" })).rejects.toMatchObject({ code: "NOT_FOUND" });
      expect((await fp.verify()).ok).toBe(true);
    } finally {
      await fp.close();
      removeDir(dir);
    }
  });

  it("exports to the same bytes on both stores, and imports each way with every hash intact", async () => {
    const pgFp = openForkpoint({ postgres: await freshPgDatabase() });
    const dir = makeTempDir();
    const sqlite = openForkpoint({ path: path.join(dir, "a.db") });
    try {
      const s = await pgFp.createSession({ userId: "u", title: "t", metadata: { n: 1 } });
      await s.append([
        { role: "user", content: { parts: [1, 2.5, "x"] } },
        { role: "assistant", content: "ok" },
      ]);
      await s.setState({ deep: { a: [1, 2] } });
      await s.recordToolCall({ tool: "search", args: { q: "x" }, result: { hits: 3 } });
      const cp = await s.checkpoint({ name: "one", metadata: { agent_id: "p" } });
      await s.append({ role: "user", content: "more" });
      await s.rollback(cp.id);
      const doc = await pgFp.exportSession(s.id, { userId: "u" });
      const copy = await sqlite.importSession(doc, { userId: "u" });
      expect(JSON.stringify(await sqlite.exportSession(copy.id, { userId: "u" }))).toBe(JSON.stringify(doc));
      const back = openForkpoint({ postgres: await freshPgDatabase() });
      try {
        const again = await back.importSession(await sqlite.exportSession(copy.id, { userId: "u" }), { userId: "u" });
        expect(JSON.stringify(await back.exportSession(again.id, { userId: "u" }))).toBe(JSON.stringify(doc));
        expect((await back.verify()).ok).toBe(true);
      } finally {
        await back.close();
      }
    } finally {
      await pgFp.close();
      await sqlite.close();
      removeDir(dir);
    }
  });

  it("a message's versions keep their order moving each way between the stores", async () => {
    const dir = makeTempDir();
    const stores = [openForkpoint({ path: path.join(dir, "a.db") }), openForkpoint({ postgres: await freshPgDatabase() })];
    const want = { versions: [1, ["answer 1", "answer 2"]], history: [1, ["answer 1", "answer 2"]] };
    try {
      for (const [from, to] of [stores, [...stores].reverse()] as const) {
        const s = await from!.createSession({ userId: "u" });
        await answersOutOfBranchOrder(s);
        const copy = await to!.importSession(await from!.exportSession(s.id, { userId: "u" }), { userId: "u" });
        expect(await lastVersions(copy)).toEqual(want);
      }
    } finally {
      for (const f of stores) await f.close();
      removeDir(dir);
    }
  });

  it("two handles (two app servers) append to one session at once: positions gapless, nothing lost", async () => {
    const db = await freshPgDatabase();
    const a = openForkpoint({ postgres: db });
    const b = openForkpoint({ postgres: db });
    try {
      const s = await a.createSession({ userId: "u" });
      const viaB = await b.getSession(s.id, { userId: "u" });
      const calls: Promise<unknown>[] = [];
      for (let i = 0; i < 40; i++)
        calls.push(s.append({ role: "user", content: `a${i}` }), viaB.append({ role: "user", content: `b${i}` }));
      await Promise.all(calls);
      const history = await s.history();
      expect(history.map((m) => m.position)).toEqual(Array.from({ length: 80 }, (_, i) => i + 1));
      expect((await b.verify({ sessionId: s.id })).ok).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
