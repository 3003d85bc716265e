// Two undos of one session at once, from two processes, one moving the files too ("both"): each lands on what the other
// left (or is refused), so the workspace's files always hold what the track says is applied.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { ConflictError } from "../../src/index.js";
import { tagLinesOf, tagLineTool } from "../fixtures/file-tools.js";
import { raceDatabase } from "../fixtures/race-partner.js";

const race = raceDatabase("forkpoint-undo-race-", () => [tagLineTool()]);

it("a 'both' undo racing another process's undo leaves the files as the track says", async () => {
  // Before the fix, most rounds ended with x1 applied and tag.txt empty: the "both" undo planned its files for the
  // first move to undo, and its conversation, after the other undo, for the second.
  const rounds = 10;
  const { dir, fp } = race;
  const partner = await race.partner("u");
  for (let i = 0; i < rounds; i++) {
    const ws = path.join(dir, `ws${i}`);
    fs.mkdirSync(ws);
    const file = path.join(ws, "tag.txt");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const c0 = await s.checkpoint({ name: "c0" });
    await s.invoke("tag_line", { path: file, line: "x1" });
    await s.checkpoint({ name: "c1" });
    // Two moves to undo: the first takes x1 off the files, the second runs no tool.
    await s.rollback(c0.id, { scope: "both" });
    await s.append({ role: "user", content: "q" });
    await s.rollback(c0.id);

    // The other process's undo starts while this one plans its files (the pause sweeps the windows a few milliseconds wide).
    const undoing = partner.call({ sessionId: s.id, op: "undo", args: { scope: "conversation" }, delayMs: (i % 10) * 0.2 });
    const [mine, theirs] = await Promise.all([
      s.undo({ scope: "both" }).then(
        () => null,
        (error: unknown) => error,
      ),
      undoing,
    ]);
    // Either may be refused while the other runs, with a typed conflict; neither fails otherwise.
    if (mine) expect(mine).toBeInstanceOf(ConflictError);
    if (!theirs.ok) expect(theirs.code).toBe("MOVE_IN_PROGRESS");
    const applied = (await s.toolTrack()).filter((t) => t.applied).map((t) => (t.args as { line: string }).line);
    expect({ round: i, file: tagLinesOf(file) }).toEqual({ round: i, file: applied });
    // Two undos that both went through landed one after the other: back where x1 was made and captured.
    if (!mine && theirs.ok) expect(applied).toEqual(["x1"]);
  }
});
