// A seeded random walk of tool calls (some `after` an earlier question, so held off the current branch), checkpoints,
// rollbacks and switches in every scope, undos and redos, in a session with a workspace: after every step each file,
// inside the workspace or outside it, holds exactly the lines of the calls the track says are applied, each once.
// The tool's undo removes its own line (it does not depend on the result), so the walk checks the track alone.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool, type SessionHandle } from "../../src/index.js";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { prng } from "../fixtures/prng.js";
import { testStore } from "../fixtures/backend.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
// Through PgBouncer the engine is PostgreSQL's: two walks check the pooler; the other stores walk six.
const SEEDS = testStore === "pgbouncer" ? [1, 2] : [1, 2, 3, 4, 5, 6];
const STEPS = 60;

type LineArgs = { path: string; line: string };
/** add_line: appends a line; undo removes that line, wherever it is. */
const addLine = defineTool<LineArgs, null>({
  name: "add_line",
  run: (args) => {
    fs.appendFileSync(args.path, `${args.line}\n`);
    return null;
  },
  undo: ({ args }) => {
    const kept = (readOrNull(args.path) ?? "").split("\n").filter((l) => l !== "" && l !== args.line);
    fs.writeFileSync(args.path, kept.map((l) => `${l}\n`).join(""));
  },
});

/** Every call of the session (all branches), by id. */
async function allCalls(s: SessionHandle) {
  const calls = new Map<string, { applied: boolean; args: LineArgs }>();
  for (const branch of await s.branches())
    for (const call of await s.toolTrack({ branchId: branch.id }))
      calls.set(call.id, { applied: call.applied, args: call.args as LineArgs });
  return [...calls.values()];
}

// 60 steps of real moves through a pooler under a loaded machine outlast the default minute.
for (const seed of SEEDS) {
  it(`seed ${seed}: every file holds the lines of the applied calls, once`, async () => {
    const random = prng(seed);
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
    const { fp } = dbs.open({ tools: [addLine] });
    const root = tempDir("forkpoint-random-walk-");
    const ws = path.join(root, "ws");
    fs.mkdirSync(ws);
    const files = [path.join(ws, "log"), path.join(root, "outside")];
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const checkpoints = [(await s.checkpoint({ name: "c0" })).id];
    const questions: string[] = [];
    const steps: string[] = [];
    for (let step = 0; step < STEPS; step++) {
      const r = random();
      const scope = pick(["conversation", "files", "both", "both"] as const);
      const moveScope = scope === "files" ? "both" : scope;
      let what: string;
      try {
        if (r < 0.28) {
          const file = pick(files);
          const after = questions.length > 0 && random() < 0.3 ? pick(questions) : undefined;
          what = `add L${step} ${file === files[0] ? "inside" : "outside"}${after ? " after a question" : ""}`;
          await s.invoke("add_line", { path: file, line: `L${step}` }, after ? { after } : {});
        } else if (r < 0.38) {
          what = "question";
          questions.push((await s.append({ role: "user", content: `q${step}` }))[0]!.id);
        } else if (r < 0.5) {
          what = "checkpoint";
          checkpoints.push((await s.checkpoint({ name: `c${step}` })).id);
        } else if (r < 0.7) {
          const target = pick(checkpoints);
          what = `rollback c${checkpoints.indexOf(target)} ${scope}`;
          await s.rollback(target, { scope });
        } else if (r < 0.82) {
          what = `switch ${moveScope}`;
          await s.switchBranch(pick(await s.branches()).id, { scope: moveScope });
        } else if (r < 0.92) {
          what = `undo ${moveScope}`;
          await s.undo({ scope: moveScope });
        } else {
          what = `redo ${moveScope}`;
          await s.redo({ scope: moveScope });
        }
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code !== "NOTHING_TO_UNDO" && code !== "NOTHING_TO_REDO") throw error;
        what = `nothing to ${code === "NOTHING_TO_UNDO" ? "undo" : "redo"}`;
      }
      steps.push(what);
      const calls = await allCalls(s);
      for (const file of files) {
        const onDisk = (readOrNull(file) ?? "").split("\n").filter((l) => l !== "");
        const applied = calls.filter((c) => c.applied && c.args.path === file).map((c) => c.args.line);
        expect(onDisk.sort(), `after: ${steps.join(", ")}`).toEqual(applied.sort());
      }
    }
    expect((await fp.verify()).ok).toBe(true);
  }, 180_000);
}
