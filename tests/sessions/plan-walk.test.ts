// A seeded random walk (hand-edit-walk.test.ts's) checking each rollback and switch against the plan made just before
// it: a refusal the plan did not foresee (`blocked`, `drift`, or `mayStop` for a stop over a recorded call's undo), a
// `blocked` plan the move went through, or a file the move changed that the plan lists nowhere (`files`, `drift`, or
// written by a call in `replayed`). WALK_SEEDS=a-b and WALK_STEPS run it longer: seeds 1-240 at 40 steps pass.
import { expect, it } from "vitest";
import { range, walk } from "../fixtures/workspace-walk.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
// Seeds whose plans once disagreed with their moves (refusals unforeseen, blocked wrongly, files unlisted).
const SEEDS = process.env.WALK_SEEDS
  ? range(process.env.WALK_SEEDS)
  : [5, 12, 24, 25, 29, 49, 54, 69, 83, 91, 108, 130, 148, 191, 193, 194, 198, 203, 225, 228];
const STEPS = Number(process.env.WALK_STEPS ?? 40);

for (const seed of SEEDS)
  it(`plan walk seed ${seed}: each move as planned`, async () => {
    expect((await walk(dbs, seed, STEPS, true)).planProblems).toEqual([]);
  });
