// A "both" switch to the current branch while another process takes a checkpoint that captures the files: the switch
// lands on the session as that checkpoint left it (or is refused), never restoring the snapshot it planned before it.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { ConflictError } from "../../src/index.js";
import { sleep } from "../helpers.js";
import { noteLineTool, tagLinesOf, tagLineTool } from "../fixtures/file-tools.js";
import { raceDatabase } from "../fixtures/race-partner.js";

const race = raceDatabase("forkpoint-self-switch-race-", () => [tagLineTool(), noteLineTool]);

it("a 'both' self-switch racing another process's checkpoint keeps the files the track says are applied", async () => {
  // Enough rounds that some checkpoint lands between the switch's files step and its conversation step: before the
  // fix, most of them deleted tag.txt on PostgreSQL while a7 and a8 stayed applied.
  const rounds = 12;
  const { dir, fp } = race;
  const partner = await race.partner("u");
  for (let i = 0; i < rounds; i++) {
    const ws = path.join(dir, `ws${i}`);
    fs.mkdirSync(ws);
    const file = path.join(ws, "tag.txt");
    const notes = path.join(dir, `notes${i}.txt`);
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const c0 = await s.checkpoint({ name: "c0" });
    await s.rollback(c0.id, { scope: "both" });
    await s.append({ role: "user", content: "go" });
    await s.invoke("tag_line", { path: file, line: "a7" });
    // An irreversible call by the other process: the switch cannot undo what comes before it.
    expect((await partner.call({ sessionId: s.id, op: "invoke", args: { tool: "note_line", args: { path: notes, line: "b7" } } })).ok).toBe(
      true,
    );
    await s.invoke("tag_line", { path: file, line: "a8" });
    const current = (await s.info()).currentBranchId;

    // The checkpoint starts first: its capture outlasts the switch's planning, so that it commits in the middle of it.
    const checkpointing = partner.call({ sessionId: s.id, op: "checkpoint" });
    await sleep(i % 3);
    const [switched, checkpointed] = await Promise.all([
      s.switchBranch(current, { scope: "both" }).then(
        () => null,
        (error: unknown) => error,
      ),
      checkpointing,
    ]);
    // Either may be refused while the other runs, with a typed conflict; neither fails otherwise.
    if (switched) expect(switched).toBeInstanceOf(ConflictError);
    if (!checkpointed.ok) expect(checkpointed.code).toBe("MOVE_IN_PROGRESS");
    const applied = (await s.toolTrack()).filter((t) => t.applied && t.tool === "tag_line").map((t) => (t.args as { line: string }).line);
    expect({ round: i, file: tagLinesOf(file) }).toEqual({ round: i, file: applied });
    expect(applied).toEqual(["a7", "a8"]);
  }
});
