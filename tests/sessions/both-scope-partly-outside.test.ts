// Review of issue 32 (round 3), pinned: a move with scope "both" takes a call as brought back by the files it restores
// as soon as its invoke changed any workspace file, even when it also wrote outside them (another directory, or a path
// the workspace excludes). A tool writing one file inside and one outside: after a rollback (scope "both") undoes it and
// a switch back restores the snapshot holding its inside file, the call is applied again but its outside file is gone,
// with nothing replayed and no drift reported.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

type Args = { inside: string; outside: string; text: string };
/** write_two: writes `text` to two files; undo deletes both. */
const writeTwo = defineTool<Args, null>({
  name: "write_two",
  run: (args) => {
    fs.writeFileSync(args.inside, args.text);
    fs.writeFileSync(args.outside, args.text);
    return null;
  },
  undo: ({ args }) => {
    fs.rmSync(args.inside, { force: true });
    fs.rmSync(args.outside, { force: true });
  },
});

for (const where of ["another directory", "a path the workspace excludes"]) {
  it.fails(`a call writing inside the workspace and in ${where}: a switch back brings both files back`, async () => {
    const { fp } = dbs.open({ tools: [writeTwo] });
    const root = tempDir("forkpoint-partly-outside-");
    const ws = path.join(root, "ws");
    fs.mkdirSync(ws);
    const inside = path.join(ws, "a.txt");
    const outside = where === "another directory" ? path.join(root, "b.txt") : path.join(ws, "b.log");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws, { exclude: ["*.log"] });
    const start = await s.checkpoint({ name: "start" });
    await s.append({ role: "user", content: "write both" });
    await s.invoke("write_two", { inside, outside, text: "1" });
    await s.checkpoint({ name: "written" });
    const written = (await s.info()).currentBranchId;
    await s.rollback(start.id, { scope: "both" });
    expect([readOrNull(inside), readOrNull(outside)]).toEqual([null, null]);

    await s.switchBranch(written, { scope: "both" });
    expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true]);
    expect([readOrNull(inside), readOrNull(outside)]).toEqual(["1", "1"]);
  });
}
