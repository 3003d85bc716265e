// A "both" undo that meets another handle's undo running its tools on the workspace is told a move is under way, or
// lands after it: what that move did to the files is forkpoint's own doing, never reported as drift.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { ConflictError, type Forkpoint } from "../../src/index.js";
import { makeTempDir, removeDir, sleep } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";
import { readOrNull, tagLineTool } from "../fixtures/file-tools.js";

let dir: string;
const opened: Forkpoint[] = [];

beforeEach(() => {
  dir = makeTempDir("forkpoint-undo-not-drift-");
});
afterEach(async () => {
  for (const fp of opened.splice(0)) await fp.close();
  removeDir(dir);
});

/** The lines of a tag_line file without their run tags, sorted. */
const linesOf = (file: string) =>
  (readOrNull(file) ?? "")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => l.replace(/#\d+$/, ""))
    .sort();

it("a 'both' undo racing another handle's undo of tool calls is never refused as drift", async () => {
  const db = path.join(dir, "forkpoint.db");
  const open = () => {
    const fp = openForkpoint({ path: db, tools: [tagLineTool()] });
    opened.push(fp);
    return fp;
  };
  const [fpA, fpB] = [open(), open()];
  const rounds = Number(process.env.H34_ROUNDS ?? 10);
  const codes: string[] = [];
  for (let i = 0; i < rounds; i++) {
    const ws = path.join(dir, `ws${i}`);
    fs.mkdirSync(ws);
    const inside = path.join(ws, "tag.txt");
    const outside = path.join(dir, `out${i}.txt`);
    const a = await fpA.createSession({ userId: "u" });
    await a.attachWorkspace(ws);
    const b = await fpB.getSession(a.id, { userId: "u" });
    const c0 = await a.checkpoint({ name: "c0" });
    await a.append({ role: "user", content: "q" });
    await a.invoke("tag_line", { path: inside, line: "x1" });
    await a.invoke("tag_line", { path: outside, line: "o1" });
    const c1 = await a.checkpoint({ name: "c1" });
    await a.rollback(c0.id, { scope: "both" });
    await a.invoke("tag_line", { path: inside, line: "y1" });
    await a.invoke("tag_line", { path: outside, line: "p1" });
    await a.checkpoint({ name: "c2" });
    await a.rollback(c1.id, { scope: "both" });
    await a.invoke("tag_line", { path: inside, line: "z1" });

    // A's undo runs five tool steps; B's, on a handle that has not read this workspace yet, starts among them.
    const [byA, byB] = await Promise.all([
      a.undo({ scope: "conversation" }).then(
        () => null,
        (error: unknown) => error,
      ),
      sleep(i % 5).then(() =>
        b.undo({ scope: "both" }).then(
          () => null,
          (error: unknown) => error,
        ),
      ),
    ]);
    for (const error of [byA, byB]) if (error) expect(error).toBeInstanceOf(ConflictError);
    codes.push(...[byA, byB].flatMap((e) => (e ? [(e as ConflictError).code] : [])));
    const calls = new Map<string, { applied: boolean; args: { path: string; line: string } }>();
    for (const br of await a.branches()) for (const c of await a.toolTrack({ branchId: br.id })) calls.set(c.id, c as never);
    const applied = (f: string) =>
      [...calls.values()]
        .filter((c) => c.applied && c.args.path === f)
        .map((c) => c.args.line)
        .sort();
    expect({ round: i, inside: linesOf(inside), outside: linesOf(outside) }).toEqual({
      round: i,
      inside: applied(inside),
      outside: applied(outside),
    });
  }
  expect(codes.filter((c) => c !== "MOVE_IN_PROGRESS")).toEqual([]);
});
