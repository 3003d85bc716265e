// Calls that write both inside the workspace and outside it (another directory, a path the workspace excludes): with
// `outsideEffects` on their tool, a move with files undoes and replays them through the tool, the restored files laid
// over what they wrote inside; without it, a call that changed workspace files is taken to act on them alone.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ValidationError, defineTool, type ToolDefinition } from "../../src/index.js";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

type Args = { inside: string; outside: string; text: string };
type Sizes = { inside: number; outside: number };
const sizeOf = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size : 0);

/** write_two: writes `text` to two files; undo deletes both. */
const writeTwo = (outsideEffects: boolean) =>
  defineTool<Args, null>({
    name: "write_two",
    outsideEffects,
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

/** append_two: appends `text` as a line to two files; undo truncates both back. */
const appendTwo = defineTool<Args, Sizes>({
  name: "append_two",
  outsideEffects: true,
  run: (args) => {
    const sizes = { inside: sizeOf(args.inside), outside: sizeOf(args.outside) };
    fs.appendFileSync(args.inside, `${args.text}\n`);
    fs.appendFileSync(args.outside, `${args.text}\n`);
    return sizes;
  },
  undo: ({ args, result }) => {
    fs.truncateSync(args.inside, result.inside);
    fs.truncateSync(args.outside, result.outside);
  },
});

/** A session over workspace `ws`, files `inside` (in it) and `outside` (another directory, or a path it excludes). */
async function setUp(tools: ToolDefinition[], where = "another directory") {
  const { fp } = dbs.open({ tools });
  const root = tempDir("forkpoint-partly-outside-");
  const ws = path.join(root, "ws");
  fs.mkdirSync(ws);
  const inside = path.join(ws, "a.txt");
  const outside = where === "another directory" ? path.join(root, "b.txt") : path.join(ws, "b.log");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws, { exclude: ["*.log"] });
  const both = () => [readOrNull(inside), readOrNull(outside)];
  return { fp, s, inside, outside, both };
}

describe("a tool with outsideEffects", () => {
  for (const where of ["another directory", "a path the workspace excludes"]) {
    it(`writing inside the workspace and in ${where}: a switch back brings both files back`, async () => {
      const { s, inside, outside, both } = await setUp([writeTwo(true)], where);
      const start = await s.checkpoint({ name: "start" });
      await s.append({ role: "user", content: "write both" });
      await s.invoke("write_two", { inside, outside, text: "1" });
      await s.checkpoint({ name: "written" });
      const written = (await s.info()).currentBranchId;
      await s.rollback(start.id, { scope: "both" });
      expect(both()).toEqual([null, null]);

      const back = await s.switchBranch(written, { scope: "both" });
      expect(back.replayed.map((t) => t.tool)).toEqual(["write_two"]);
      expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true]);
      expect(both()).toEqual(["1", "1"]);
    });
  }

  it("appending: a switch back replays it before the files are restored, so each file has its line once", async () => {
    const { fp, s, inside, outside, both } = await setUp([appendTwo]);
    fs.writeFileSync(inside, "");
    const start = await s.checkpoint({ name: "start" });
    await s.append({ role: "user", content: "note it" });
    await s.invoke("append_two", { inside, outside, text: "L" });
    await s.invoke("append_two", { inside, outside, text: "M" });
    await s.checkpoint({ name: "noted" });
    // A call after the snapshot: undone before the files are restored, replayed after them.
    await s.invoke("append_two", { inside, outside, text: "N" });
    const noted = (await s.info()).currentBranchId;
    await s.rollback(start.id, { scope: "both" });
    expect(both()).toEqual(["", ""]);

    const back = await s.switchBranch(noted, { scope: "both" });
    expect(back.replayed).toHaveLength(3);
    expect(both()).toEqual(["L\nM\nN\n", "L\nM\nN\n"]);
    expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true, true, true]);
    // Undone again, each undo gets the result of its latest application: both files back to empty.
    await s.rollback(start.id, { scope: "both" });
    expect(both()).toEqual(["", ""]);
    expect((await fp.verify({ sessionId: s.id })).ok).toBe(true);
  });

  it("a rollback that keeps it applied keeps both its effects, and runs nothing", async () => {
    const { s, inside, outside, both } = await setUp([appendTwo]);
    fs.writeFileSync(inside, "");
    await s.append({ role: "user", content: "note it" });
    await s.invoke("append_two", { inside, outside, text: "L" });
    const noted = await s.checkpoint({ name: "noted" });
    await s.invoke("append_two", { inside, outside, text: "M" });
    const back = await s.rollback(noted.id, { scope: "both" });
    expect([back.undone.length, back.replayed.length]).toEqual([1, 0]);
    expect(both()).toEqual(["L\n", "L\n"]);
  });

  it("a files-only restore leaves it applied, its outside effect in place; a move with files later restores the rest", async () => {
    const { s, inside, outside, both } = await setUp([appendTwo]);
    fs.writeFileSync(inside, "");
    const start = await s.checkpoint({ name: "start" });
    await s.append({ role: "user", content: "note it" });
    await s.invoke("append_two", { inside, outside, text: "L" });
    const noted = await s.checkpoint({ name: "noted" });
    await s.rollback(start.id, { scope: "files" });
    expect(both()).toEqual(["", "L\n"]);
    expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true]);

    // The call is applied: a move with files brings the files back and runs nothing, so its outside line lands once.
    const back = await s.rollback(noted.id, { scope: "both" });
    expect(back.replayed).toEqual([]);
    expect(both()).toEqual(["L\n", "L\n"]);
  });

  it("is a boolean, or a ValidationError naming it", () => {
    const bad = { name: "t", run: () => null, outsideEffects: "yes" } as unknown as ToolDefinition;
    expect(() => defineTool(bad)).toThrow(ValidationError);
    expect(() => defineTool(bad)).toThrow(/outsideEffects/);
  });
});

describe("a tool without outsideEffects (the default)", () => {
  it("writing inside and outside: its call is taken to act on the files alone, so a switch back brings the inside file only", async () => {
    const { s, inside, outside, both } = await setUp([writeTwo(false)]);
    const start = await s.checkpoint({ name: "start" });
    await s.append({ role: "user", content: "write both" });
    await s.invoke("write_two", { inside, outside, text: "1" });
    await s.checkpoint({ name: "written" });
    const written = (await s.info()).currentBranchId;
    await s.rollback(start.id, { scope: "both" });
    const back = await s.switchBranch(written, { scope: "both" });
    expect(back.replayed).toEqual([]);
    expect(both()).toEqual(["1", null]);
  });
});
