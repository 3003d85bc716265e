// Review of issue 32 (round 6): a checkpoint taken while a tool call runs on the workspace (from another handle, or the
// same one) waits for that call to end, so its files hold the call done with it applied; a move back to it then
// replays nothing, and the call's line is there once.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** slow_tag: appends `line#n` to the file at once, calls `wrote`, then takes a while to return; undo removes that line. */
function slowTag(file: string, wrote: () => void = () => undefined) {
  let runs = 0;
  return defineTool<{ line: string; ms: number }, { tag: number }>({
    name: "slow_tag",
    run: async (args) => {
      const tag = ++runs;
      fs.appendFileSync(file, `${args.line}#${tag}\n`);
      wrote();
      await new Promise((r) => setTimeout(r, args.ms));
      return { tag };
    },
    undo: ({ args, result }) => {
      const kept = (readOrNull(file) ?? "").split("\n").filter((l) => l !== "" && l !== `${args.line}#${result.tag}`);
      fs.writeFileSync(file, kept.map((l) => `${l}\n`).join(""));
    },
  });
}

for (const handles of ["one handle", "two Forkpoints"])
  it(`a checkpoint taken while a call runs (${handles}) holds it done: a move back to it replays nothing`, async () => {
    const ws = path.join(tempDir("forkpoint-cp-mid-call-"), "ws");
    fs.mkdirSync(ws);
    const file = path.join(ws, "tag.txt");
    // The checkpoint is asked for once the call has written (a fixed delay could let it come first on a loaded machine).
    let wrote!: () => void;
    const written = new Promise<void>((r) => (wrote = r));
    const a = dbs.open({ tools: [slowTag(file, wrote)] });
    const s = await a.fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const other =
      handles === "one handle" ? s : await dbs.open({ path: a.path, tools: [slowTag(file)] }).fp.getSession(s.id, { userId: "u" });
    const c0 = await s.checkpoint({ name: "c0" });
    await s.append({ role: "user", content: "go" });
    const [, mid] = await Promise.all([
      s.invoke("slow_tag", { line: "b", ms: 250 }),
      written.then(() => other.checkpoint({ name: "mid" })),
    ]);
    await s.rollback(c0.id, { scope: "both" });
    expect(readOrNull(file)).toBeNull();
    const back = await s.rollback(mid.id, { scope: "both" });
    expect(back.replayed).toEqual([]);
    expect(readOrNull(file)).toBe("b#1\n");
    expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true]);
  });
