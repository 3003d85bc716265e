// From the MCP review: a write that lands after a restore checked a file (`still`) and before it replaced or deleted it
// went into the file being replaced, and was lost with it (driven through MCP: about 1 in 50 racing rollbacks). The
// restore now looks at the file it took away once it is gone: changed since the check, it is put back, and kept.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sha256 } from "../../src/sessions/integrity/hashes.js";
import { fileIdOf } from "../../src/sessions/workspace/file-id.js";
import { restoreChanges, type RestoreChange } from "../../src/sessions/workspace/files.js";
import { filesUnder, makeTempDir, removeDir } from "../helpers.js";

let dir: string;

beforeEach(() => {
  dir = makeTempDir("forkpoint-late-write-");
});
afterEach(() => removeDir(dir));

const idOf = (text: string) => fileIdOf(sha256(Buffer.from(text)), false);
const contents = async () => new Map([[sha256(Buffer.from("target\n")), Buffer.from("target\n")]]);

/** A `still` that answers as the restore's own check does, then lets an editor save `text` at `rel` right after it. */
function stillThenWrite(rel: string, text: string) {
  let wrote = false;
  return (p: string, from: string | null) => {
    const full = path.join(dir, p);
    const same = from === null ? !fs.existsSync(full) : fs.existsSync(full) && idOf(fs.readFileSync(full, "utf8")) === from;
    if (p === rel && !wrote) {
      wrote = true;
      fs.writeFileSync(path.join(dir, rel), text);
    }
    return same;
  };
}

describe("a write landing between a restore's check of a file and its replacing or deleting it", () => {
  it("is kept when the file was to be replaced", async () => {
    fs.writeFileSync(path.join(dir, "a.txt"), "before\n");
    const changes: RestoreChange[] = [{ path: "a.txt", from: idOf("before\n"), to: idOf("target\n") }];
    const done = await restoreChanges(dir, changes, contents, { any: false }, stillThenWrite("a.txt", "saved late\n"));
    expect(filesUnder(dir, "\0")).toEqual({ "a.txt": "saved late\n" });
    expect(done).toMatchObject({ written: [], kept: ["a.txt"] });
  });

  it("is kept when the file was to be deleted", async () => {
    fs.writeFileSync(path.join(dir, "a.txt"), "before\n");
    const changes: RestoreChange[] = [{ path: "a.txt", from: idOf("before\n"), to: null }];
    const done = await restoreChanges(dir, changes, contents, { any: false }, stillThenWrite("a.txt", "saved late\n"));
    expect(filesUnder(dir, "\0")).toEqual({ "a.txt": "saved late\n" });
    expect(done).toMatchObject({ deleted: [], kept: ["a.txt"] });
  });

  it("changes nothing else: the other files are replaced and deleted as asked", async () => {
    fs.writeFileSync(path.join(dir, "a.txt"), "before\n");
    fs.writeFileSync(path.join(dir, "b.txt"), "before\n");
    fs.writeFileSync(path.join(dir, "c.txt"), "before\n");
    const changes: RestoreChange[] = [
      { path: "a.txt", from: idOf("before\n"), to: idOf("target\n") },
      { path: "b.txt", from: idOf("before\n"), to: null },
      { path: "c.txt", from: idOf("before\n"), to: idOf("target\n") },
    ];
    const done = await restoreChanges(dir, changes, contents, { any: false }, stillThenWrite("c.txt", "saved late\n"));
    expect(filesUnder(dir, "\0")).toEqual({ "a.txt": "target\n", "c.txt": "saved late\n" });
    expect(done).toEqual({ written: ["a.txt"], deleted: ["b.txt"], kept: ["c.txt"] });
  });
});
