// From the third MCP review: a file a rewind replaces could lose an editor's save landing as it was replaced. An
// editor that saves by renaming a new file over the old one (vim, VS Code) right before the restore's own file was
// renamed into place was replaced by it; an append landing on the restore's file before a changed file was put back
// went away with it (driven through MCP: 1 in about 80 racing edits). Each save below lands at that moment.
import fs from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sha256 } from "../../src/sessions/integrity/hashes.js";
import { fileIdOf } from "../../src/sessions/workspace/file-id.js";
import { restoreChanges, type RestoreChange } from "../../src/sessions/workspace/files.js";
import { filesUnder, makeTempDir, removeDir } from "../helpers.js";

// The CommonJS face of node:fs: what the restore's named imports of it are kept in step with.
const cjsFs = createRequire(import.meta.url)("node:fs") as typeof fs;
const realRename = cjsFs.renameSync;
const realLink = cjsFs.linkSync;

let dir: string;

beforeEach(() => {
  dir = makeTempDir("forkpoint-replace-race-");
});
afterEach(() => {
  cjsFs.renameSync = realRename;
  cjsFs.linkSync = realLink;
  syncBuiltinESMExports();
  removeDir(dir);
});

const idOf = (text: string) => fileIdOf(sha256(Buffer.from(text)), false);
const contents = async () => new Map([[sha256(Buffer.from("target\n")), Buffer.from("target\n")]]);
const isUsers = (from: unknown) => String(from).endsWith(".swp");

/** Runs `before` (once) right before, or `after` right after, the restore renames or links a file onto `full`. */
function onLanding(full: string, hook: { before?: () => void; after?: () => void }) {
  let fired = false;
  const wrap =
    <F extends (from: fs.PathLike, to: fs.PathLike) => void>(real: F) =>
    (from: fs.PathLike, to: fs.PathLike) => {
      const ours = String(to) === full && !isUsers(from) && !fired;
      if (ours) fired = true;
      if (ours) hook.before?.();
      real(from, to);
      if (ours) hook.after?.();
    };
  cjsFs.renameSync = wrap(realRename);
  cjsFs.linkSync = wrap(realLink);
  syncBuiltinESMExports();
}

/** What an editor that saves by rename does: the new text written beside the file, then renamed over it. */
function saveByRename(full: string, text: string) {
  const swp = `${full}.swp`;
  fs.writeFileSync(swp, text);
  realRename(swp, full);
}

describe("an editor's save landing as a restore replaces the file", () => {
  it("by rename, right before the restore's file lands: the save is kept", async () => {
    const full = path.join(dir, "a.txt");
    fs.writeFileSync(full, "before\n");
    onLanding(full, { before: () => saveByRename(full, "saved by rename\n") });
    const changes: RestoreChange[] = [{ path: "a.txt", from: idOf("before\n"), to: idOf("target\n") }];
    const done = await restoreChanges(dir, changes, contents, { any: false });
    expect(filesUnder(dir, "\0")).toEqual({ "a.txt": "saved by rename\n" });
    expect(done).toMatchObject({ written: [], kept: ["a.txt"] });
  });

  it("as an append, after a save the restore puts back: both are kept", async () => {
    const full = path.join(dir, "a.txt");
    fs.writeFileSync(full, "before\n");
    // The first save lands right after the restore's check of the file; the append, once a file lands at its place.
    let saved = false;
    const still = () => {
      const same = fs.readFileSync(full, "utf8") === "before\n";
      if (!saved) fs.writeFileSync(full, "saved late\n");
      saved = true;
      return same;
    };
    onLanding(full, { after: () => fs.appendFileSync(full, "appended\n") });
    const changes: RestoreChange[] = [{ path: "a.txt", from: idOf("before\n"), to: idOf("target\n") }];
    const done = await restoreChanges(dir, changes, contents, { any: false }, still);
    expect(filesUnder(dir, "\0")).toEqual({ "a.txt": "saved late\nappended\n" });
    expect(done).toMatchObject({ written: [], kept: ["a.txt"] });
  });

  it("with no save: the file is replaced, and nothing is left beside it", async () => {
    const full = path.join(dir, "a.txt");
    fs.writeFileSync(full, "before\n");
    const changes: RestoreChange[] = [{ path: "a.txt", from: idOf("before\n"), to: idOf("target\n") }];
    const done = await restoreChanges(dir, changes, contents, { any: false });
    expect(filesUnder(dir, "\0")).toEqual({ "a.txt": "target\n" });
    expect(done).toMatchObject({ written: ["a.txt"], kept: [] });
  });
});
