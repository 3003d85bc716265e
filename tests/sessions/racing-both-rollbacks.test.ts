// Two processes rolling one session's conversation and files back at the same moment: the one refused because the
// other's restore is under way changes nothing for good, leaves no move journaled, and never runs later.
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { openForkpoint, sqlOn } from "../fixtures/backend.js";
import { roller } from "../fixtures/roller.js";
import { makeTempDir, removeDir } from "../helpers.js";

const ROUNDS = 12;
const children: ChildProcess[] = [];
let fp: Forkpoint | undefined;
let dir: string | undefined;

afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  await fp?.close();
  if (dir) removeDir(dir);
});

for (const other of ["both", "files"])
  it(`a both rollback racing a ${other} one, refused for its restore, leaves nothing journaled: the session moves on`, async () => {
    dir = makeTempDir("forkpoint-racing-rollbacks-");
    const ws = path.join(dir, "ws");
    fs.mkdirSync(ws);
    const db = path.join(dir, "forkpoint.db");
    fs.writeFileSync(path.join(ws, "a.txt"), "one\n");
    // Enough files that two restores overlap.
    for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(ws, `f${i}.txt`), `one ${i}\n`.repeat(50));
    fp = openForkpoint({ path: db });
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const one = await s.checkpoint({ name: "one" });
    fs.writeFileSync(path.join(ws, "a.txt"), "two\n");
    for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(ws, `f${i}.txt`), `two ${i}\n`.repeat(50));
    const two = await s.checkpoint({ name: "two" });
    const [a, b] = await Promise.all([roller(db, s.id, children), roller(db, s.id, children)]);
    for (let round = 0; round < ROUNDS; round++) {
      const told = await Promise.all([a.cue(one.id), b.cue(one.id, other)]);
      for (const t of told) if (!t.ok) expect(t.code).toBe("MOVE_IN_PROGRESS");
      // Both may be refused (each saw the other under way): then nothing moved.
      const moved = told.some((t) => t.ok);
      expect(fs.readFileSync(path.join(ws, "a.txt"), "utf8")).toBe(moved ? "one\n" : "two\n");
      // Nothing left running while both children live: a move now is not refused.
      expect(await sqlOn(db, "SELECT id FROM moves WHERE status = 'running'")).toEqual([]);
      await s.rollback(two.id, { scope: "both" });
      expect(fs.readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("two\n");
    }
  });
