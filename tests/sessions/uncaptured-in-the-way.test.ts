// What a move's undo cannot write over safely, made by hand where it writes (a named pipe, a file over `maxPayloadBytes`,
// a file ignored since, a hard link, a folder): the move is refused before any step, forced or not, and the plan says so.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { write } from "../fixtures/put-back-tools.js";
import { tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const LIMIT = 64 * 1024;

/**
 * A session of `dbs` with `tools`, its workspace a fresh temp dir (named from `prefix`, prepared by `before`) attached,
 * one message in and checkpoint "c0" taken: where each rewind here starts.
 */
async function rewindable(
  prefix: string,
  o: { tools?: unknown[]; limits?: { maxPayloadBytes: number }; gitignore?: boolean; before?: (ws: string) => void } = {},
) {
  const ws = tempDir(prefix);
  o.before?.(ws);
  const { fp } = dbs.open({ tools: (o.tools ?? [write]) as never[], ...(o.limits ? { limits: o.limits } : {}) });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws, o.gitignore ? { gitignore: true } : undefined);
  await s.append({ role: "user", content: "start" });
  const c0 = await s.checkpoint({ name: "c0" });
  return { ws, s, c0 };
}

for (const kind of ["a named pipe", "a file over the size limit"])
  for (const scope of ["conversation", "both"] as const)
    it(`${kind} made by hand where a ${scope} rewind's undo writes: refused even when forced, the file kept`, async () => {
      const { ws, s, c0 } = await rewindable("forkpoint-uncaptured-", { limits: { maxPayloadBytes: LIMIT } });
      const b = path.join(ws, "b.txt");
      await s.invoke(write, { path: b, text: "x" });
      fs.rmSync(b);
      if (kind === "a named pipe") execFileSync("mkfifo", [b]);
      else fs.writeFileSync(b, Buffer.alloc(LIMIT + 1, 65));
      const before = { branches: await s.branches(), checkpoints: (await s.listCheckpoints()).items };

      const planned = await s.plan({ checkpointId: c0.id, scope });
      expect(planned.blocked).toContain(`b.txt is ${kind === "a named pipe" ? "a named pipe" : `a file of ${LIMIT + 1} bytes`}`);
      const refused = await s.rollback(c0.id, { scope, force: true }).catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: "WORKSPACE_DRIFT", message: planned.blocked });

      const st = fs.lstatSync(b);
      expect(kind === "a named pipe" ? st.isFIFO() : st.size).toBe(kind === "a named pipe" ? true : LIMIT + 1);
      expect({ branches: await s.branches(), checkpoints: (await s.listCheckpoints()).items }).toEqual(before);
    });

for (const how of [".gitignore", "exclude"])
  for (const scope of ["conversation", "both"] as const)
    for (const edited of [true, false])
      it(`a file the ${how} leaves out since the call wrote it, ${edited ? "then edited by hand" : "unchanged"}: a ${scope} rewind ${edited ? "is refused even when forced" : "goes on"}`, async () => {
        const { ws, s, c0 } = await rewindable("forkpoint-ignored-since-", {
          gitignore: true,
          before: (dir) => fs.writeFileSync(path.join(dir, ".gitignore"), ""),
        });
        const b = path.join(ws, "b.txt");
        await s.invoke(write, { path: b, text: "x" });
        if (how === ".gitignore") fs.writeFileSync(path.join(ws, ".gitignore"), "b.txt\n");
        else await s.attachWorkspace(ws, { gitignore: true, exclude: ["b.txt"] });
        if (edited) fs.writeFileSync(b, "by hand");
        // A "both" rewind past the exclude change is refused for that (the target was captured under other rules).
        if (how === "exclude" && scope === "both") {
          await expect(s.plan({ checkpointId: c0.id, scope })).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
          return;
        }
        const planned = await s.plan({ checkpointId: c0.id, scope });
        if (!edited) {
          expect(planned.blocked).toBeUndefined();
          await s.rollback(c0.id, { scope, force: true });
          expect(fs.existsSync(b)).toBe(false); // the call's own file, undone
          return;
        }
        expect(planned.blocked).toContain("b.txt is left out by its rules now");
        await expect(s.rollback(c0.id, { scope, force: true })).rejects.toMatchObject({
          code: "WORKSPACE_DRIFT",
          message: planned.blocked,
        });
        expect(fs.readFileSync(b, "utf8")).toBe("by hand");
      });

for (const scope of ["conversation", "both"] as const)
  it(`a hard link to a file outside, made by hand where a call wrote: a ${scope} rewind is refused even when forced, the outside file untouched`, async () => {
    const outside = path.join(tempDir("forkpoint-outside-"), "secret.txt");
    fs.writeFileSync(outside, "secret");
    const { ws, s, c0 } = await rewindable("forkpoint-hard-link-", { before: (dir) => fs.writeFileSync(path.join(dir, "b.txt"), "old") });
    const b = path.join(ws, "b.txt");
    await s.invoke(write, { path: b, text: "x" });
    fs.rmSync(b);
    fs.linkSync(outside, b);

    const planned = await s.plan({ checkpointId: c0.id, scope });
    expect(planned.blocked).toContain("b.txt has other hard links");
    await expect(s.rollback(c0.id, { scope, force: true })).rejects.toMatchObject({ code: "WORKSPACE_DRIFT", message: planned.blocked });
    expect(fs.readFileSync(outside, "utf8")).toBe("secret");
    // A plain copy there instead: the rewind goes on and puts back what the call found.
    fs.rmSync(b);
    fs.copyFileSync(outside, b);
    await s.rollback(c0.id, { scope, force: true });
    expect([fs.readFileSync(b, "utf8"), fs.readFileSync(outside, "utf8")]).toEqual(["old", "secret"]);
  });

/** to_folder: makes the file at `path` a folder holding `in`; undo makes it the file it was. */
const toFolder = defineTool<{ path: string }, { previous: string }>({
  name: "to_folder",
  run: ({ path: p }) => {
    const previous = fs.readFileSync(p, "utf8");
    fs.rmSync(p);
    fs.mkdirSync(p);
    fs.writeFileSync(path.join(p, "in"), "z");
    return { previous };
  },
  undo: ({ args, result }) => {
    fs.rmSync(args.path, { recursive: true });
    fs.writeFileSync(args.path, result.previous);
  },
});

for (const scope of ["conversation", "both"] as const)
  for (const by of ["by hand", "by a call"])
    it(`a folder made ${by} where a call wrote a file: a ${scope} rewind ${by === "by hand" ? "is refused even when forced" : "goes on"}`, async () => {
      const { ws, s, c0 } = await rewindable("forkpoint-folder-", { tools: [write, toFolder] });
      const b = path.join(ws, "b.txt");
      await s.invoke(write, { path: b, text: "x" });
      if (by === "by a call") await s.invoke(toFolder, { path: b });
      else {
        fs.rmSync(b);
        fs.mkdirSync(b);
        fs.writeFileSync(path.join(b, "in"), "by hand");
      }
      const planned = await s.plan({ checkpointId: c0.id, scope });
      if (by === "by a call") {
        expect(planned.blocked).toBeUndefined();
        await s.rollback(c0.id, { scope });
        expect(fs.existsSync(b)).toBe(false);
        return;
      }
      expect(planned.blocked).toContain("b.txt is a folder now");
      await expect(s.rollback(c0.id, { scope, force: true })).rejects.toMatchObject({ code: "WORKSPACE_DRIFT", message: planned.blocked });
      expect(fs.readFileSync(path.join(b, "in"), "utf8")).toBe("by hand");
    });
