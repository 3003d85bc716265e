// What a workspace holds that forkpoint cannot store (a FIFO, a socket, a link, a name that is not UTF-8, a file over
// the size limit, a file or folder it may not read) is skipped, and said, by attach, checkpoint and diffFiles: it never
// stops a call, and no rewind writes or deletes it.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Forkpoint, SkippedFile } from "../../src/index.js";
import { makeTempDir, rejectionOf, removeDir, restoringWriteTool } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";
import { nodeArgs } from "../fixtures/compiled.js";

const CHILD = fileURLToPath(new URL("../fixtures/workspace-unreadable.ts", import.meta.url));
let dir: string;
let ws: string;
let db: string;
let fp: Forkpoint;
let server: net.Server | null = null;

const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws, rel), text);
};
/** The regular files under the workspace whose names are text, with their text (a FIFO is never opened). */
const tree = () => {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const d of fs.readdirSync(path.join(ws, rel), { withFileTypes: true })) {
      const child = rel === "" ? d.name : `${rel}/${d.name}`;
      if (d.isDirectory()) walk(child);
      else if (d.isFile() && !d.name.includes("\ufffd")) out[child] = fs.readFileSync(path.join(ws, child), "utf8");
    }
  };
  walk("");
  return out;
};
const BAD = Buffer.concat([Buffer.from("bad-"), Buffer.from([0xff]), Buffer.from(".txt")]);
const badPath = () => Buffer.concat([Buffer.from(`${ws}/`), BAD]);
const open = (maxPayloadBytes = 1000) => (fp = openForkpoint({ path: db, limits: { maxPayloadBytes }, tools: [restoringWriteTool(ws)] }));

beforeEach(() => {
  dir = makeTempDir("forkpoint-wsskip-");
  ws = path.join(dir, "project");
  db = path.join(dir, "forkpoint.db");
  fs.mkdirSync(ws);
});
afterEach(async () => {
  await fp?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(null)));
  server = null;
  removeDir(dir);
});

/** A UNIX socket at `rel`, listening until the test ends. */
async function socketAt(rel: string): Promise<void> {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  server = net.createServer();
  await new Promise<void>((resolve) => server!.listen(path.join(ws, rel), resolve));
}

describe("what cannot be stored", () => {
  it("is skipped and said; attach, checkpoint, diff, a tool call and a rewind all go on, leaving it as it is", async () => {
    open();
    write("a.txt", "a1");
    write("src/b.txt", "b1");
    write("big.bin", "x".repeat(5000));
    expect(spawnSync("mkfifo", [path.join(ws, "pipe")]).status).toBe(0);
    await socketAt("run/app.sock");
    fs.symlinkSync("a.txt", path.join(ws, "link.txt"));
    fs.writeFileSync(badPath(), "bad");
    const skipped: SkippedFile[] = [
      { path: "bad-\ufffd.txt", reason: expect.stringContaining("not UTF-8") },
      { path: "big.bin", reason: "is 5000 bytes, over the limit of 1000" },
      { path: "link.txt", reason: "is a symbolic link (links are not captured)" },
      { path: "pipe", reason: "is a FIFO (a named pipe)" },
      { path: "run/app.sock", reason: "is a socket" },
    ];

    const s = await fp.createSession({ userId: "alice" });
    expect(await s.attachWorkspace(ws)).toEqual({ dir: fs.realpathSync(ws), exclude: [], files: 2, skipped });
    const a = await s.checkpoint({ name: "a" });
    expect(a.skipped).toEqual(skipped);
    write("a.txt", "a2");
    expect(await s.diffFiles(a.id)).toMatchObject({ added: [], modified: ["a.txt"], deleted: [], skipped });
    expect(await s.invoke("write_file", { rel: "src/c.txt", text: "c" })).toEqual({ previous: null });
    const b = await s.checkpoint({ name: "b" });
    expect(b.skipped).toEqual(skipped);

    await s.rollback(a.id, { scope: "files" });
    expect(tree()).toEqual({ "a.txt": "a1", "src/b.txt": "b1", "big.bin": "x".repeat(5000) });
    expect(fs.readFileSync(badPath(), "utf8")).toBe("bad");
    expect(fs.lstatSync(path.join(ws, "pipe")).isFIFO()).toBe(true);
    expect(fs.lstatSync(path.join(ws, "run/app.sock")).isSocket()).toBe(true);
    expect(fs.readlinkSync(path.join(ws, "link.txt"))).toBe("a.txt");
    await s.rollback(b.id, { scope: "files" });
    expect(tree()).toMatchObject({ "a.txt": "a2", "src/c.txt": "c" });
    // Reopened (a new stat cache, loaded from the database): still said.
    await fp.close();
    open();
    const again = await fp.getSession(s.id, { userId: "alice" });
    expect((await again.diffFiles(b.id)).skipped).toEqual(skipped);
  });

  it("a file captured before that grows past the limit is said, never deleted nor overwritten by a rewind", async () => {
    open();
    write("a.txt", "a1");
    write("data.json", "small");
    const s = await fp.createSession({ userId: "alice" });
    await s.attachWorkspace(ws);
    const a = await s.checkpoint({ name: "a" });
    write("data.json", "y".repeat(5000));
    const b = await s.checkpoint({ name: "b" });
    expect(b.skipped).toEqual([{ path: "data.json", reason: "is 5000 bytes, over the limit of 1000" }]);
    expect(await s.diffFiles(a.id)).toMatchObject({ added: [], modified: [], deleted: [], skipped: b.skipped });
    for (const force of [false, true]) {
      const e = await rejectionOf(s.rollback(a.id, { scope: "files", force }));
      expect(e).toMatchObject({ code: "WORKSPACE_DRIFT" });
      expect(e.message).toContain("data.json");
    }
    expect(tree()).toEqual({ "a.txt": "a1", "data.json": "y".repeat(5000) });
    fs.rmSync(path.join(ws, "data.json"));
    await s.rollback(a.id, { scope: "files" });
    expect(tree()).toEqual({ "a.txt": "a1", "data.json": "small" });
  });

  it("a file or folder the process may not read is skipped with why (a real child process without the right)", async () => {
    write("a.txt", "a");
    write("secret.txt", "secret");
    write("private/key.txt", "key");
    fs.chmodSync(path.join(ws, "secret.txt"), 0o000);
    fs.chmodSync(path.join(ws, "private"), 0o000);
    try {
      // As root, permissions stop no one: the child runs without the capabilities that bypass them.
      const root = process.getuid?.() === 0;
      const args = [...nodeArgs(CHILD), db, ws];
      const [cmd, argv] = root
        ? ["setpriv", ["--bounding-set=-dac_override,-dac_read_search", "--", process.execPath, ...args]]
        : [process.execPath, args];
      const child = spawn(cmd as string, argv as string[], { stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      expect(await new Promise((resolve) => child.on("exit", resolve))).toBe(0);
      const got = JSON.parse(out) as { attached: { files: number; skipped: SkippedFile[] }; checkpoint: SkippedFile[]; diff: unknown };
      const skipped = [
        { path: "private", reason: "cannot be read (EACCES)" },
        { path: "secret.txt", reason: "cannot be read (EACCES)" },
      ];
      expect(got.attached).toMatchObject({ files: 1, skipped });
      expect(got.checkpoint).toEqual(skipped);
      expect(got.diff).toEqual({ added: [], modified: [], deleted: [], patch: "", skipped });
    } finally {
      fs.chmodSync(path.join(ws, "private"), 0o755);
    }
  });
});
