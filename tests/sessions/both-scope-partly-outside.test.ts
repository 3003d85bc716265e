// Review of issue 32 (round 3), pinned: a move with scope "both" takes a call as brought back by the files it restores
// as soon as its invoke changed any workspace file, even when it also wrote outside them (another directory, or a path
// the workspace excludes). A tool writing one file inside and one outside: after a rollback (scope "both") undoes it and
// a switch back restores the snapshot holding its inside file, the call is applied again but its outside file is gone,
// with nothing replayed and no drift reported. Scope "files" has the same fault the other way: it marks such a call
// unapplied while its outside effect stays, so a later move replays it and an append lands twice outside.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

type Args = { inside: string; outside: string; text: string };
type AppendArgs = { inside: string; outside: string; line: string };
type Sizes = { inside: number; outside: number };
const sizeOf = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size : 0);
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

/** append_two: appends `line` to two files; undo truncates both back. */
const appendTwo = defineTool<AppendArgs, Sizes>({
  name: "append_two",
  run: (args) => {
    const sizes = { inside: sizeOf(args.inside), outside: sizeOf(args.outside) };
    fs.appendFileSync(args.inside, `${args.line}\n`);
    fs.appendFileSync(args.outside, `${args.line}\n`);
    return sizes;
  },
  undo: ({ args, result }) => {
    fs.truncateSync(args.inside, result.inside);
    fs.truncateSync(args.outside, result.outside);
  },
});

it.fails("a files-only rollback before such a call, then a move back to it: its outside line lands once", async () => {
  const { fp } = dbs.open({ tools: [appendTwo] });
  const root = tempDir("forkpoint-partly-outside-");
  const ws = path.join(root, "ws");
  fs.mkdirSync(ws);
  const inside = path.join(ws, "a.txt");
  const outside = path.join(root, "b.txt");
  fs.writeFileSync(inside, "");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.append({ role: "user", content: "note it" });
  await s.invoke("append_two", { inside, outside, line: "L" });
  const noted = await s.checkpoint({ name: "noted" });
  await s.rollback(start.id, { scope: "files" });
  expect([readOrNull(inside), readOrNull(outside)]).toEqual(["", "L\n"]);

  await s.rollback(noted.id, { scope: "conversation" });
  expect([readOrNull(inside), readOrNull(outside)]).toEqual(["L\n", "L\n"]);
});
