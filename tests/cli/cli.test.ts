// Every forkpoint command, as text and as --json, over a real database file: run in the test process (./in-process.ts),
// and one command of each family through the installed binary too, which must print exactly the same.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, watch } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { installCli, type Installed } from "./binary.js";
import { runInProcess } from "./in-process.js";

let cli: Installed;
let db = "";
const ids = { session: "", greeted: "", later: "", hello: "", more: "", bobSession: "" };
const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/;

beforeAll(async () => {
  cli = await installCli();
  db = join(cli.dir, "cli.db");
  const fp = openForkpoint({ path: db });
  const s = await fp.createSession({ userId: "ann", title: "CLI test" });
  const [hello] = await s.append([
    { role: "user", content: "hello" },
    { role: "assistant", content: { parts: ["hi"] } },
  ]);
  await s.setState({ city: "Lisbon" });
  ids.greeted = (await s.checkpoint({ name: "greeted" })).id;
  const [more] = await s.append({ role: "user", content: "more" });
  await s.setState({ city: "Porto", days: 3 });
  await s.recordToolCall({ tool: "search", args: { q: "hotels" }, result: ["a"] });
  ids.later = (await s.checkpoint({ name: "later" })).id;
  Object.assign(ids, { session: s.id, hello: hello!.id, more: more!.id });
  ids.bobSession = (await fp.createSession({ userId: "bob", title: "Bob's" })).id;
  await fp.close();
});
afterAll(() => cli.remove());

/** Runs the command on the test database; fails the test on a non-zero exit unless `status` says otherwise. */
async function run(args: string[], { status = 0, input }: { status?: number; input?: string } = {}) {
  const r = await runInProcess(["--db", db, ...args], { input });
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status, stderr: status === 0 ? "" : expect.any(String) });
  return r;
}
const lines = async (args: string[]) => (await run(args)).stdout.trimEnd().split("\n");
const json = async (args: string[]) => JSON.parse((await run(["--json", ...args])).stdout);

describe("listings", () => {
  it("sessions: a user's, as an aligned table with a header and ISO times when piped; JSON is the page", async () => {
    const text = await lines(["sessions", "-u", "ann"]);
    expect(text[0]).toMatch(/^ID\s+TITLE\s+UPDATED$/);
    expect(text[1]).toMatch(new RegExp(`^${ids.session}\\s+CLI test\\s+${ISO.source}$`));
    expect(text[0]!.indexOf("TITLE")).toBe(text[1]!.indexOf("CLI test"));
    expect(await json(["sessions", "-u", "ann"])).toMatchObject({
      items: [{ id: ids.session, userId: "ann", title: "CLI test" }],
      nextCursor: null,
    });
    expect(await lines(["sessions", "-u", "nobody"])).toEqual(["no sessions"]);
  });

  it("sessions --all and users: every user's, for operators", async () => {
    const all = await lines(["sessions", "--all"]);
    expect(all[0]).toMatch(/^ID\s+USER\s+TITLE\s+UPDATED$/);
    expect(all.slice(1).map((l) => l.split(/\s+/).slice(0, 2))).toEqual([
      [ids.bobSession, "bob"],
      [ids.session, "ann"],
    ]);
    const page = await json(["sessions", "--all", "-n", "1"]);
    expect(page.items.map((s: { id: string }) => s.id)).toEqual([ids.bobSession]);
    expect((await json(["sessions", "--all", "-n", "1", "--cursor", page.nextCursor])).items.map((s: { id: string }) => s.id)).toEqual([
      ids.session,
    ]);
    expect(await lines(["users"])).toEqual([
      expect.stringMatching(/^USER\s+SESSIONS\s+UPDATED$/),
      expect.stringMatching(/^ann\s+1\s+/),
      expect.stringMatching(/^bob\s+1\s+/),
    ]);
    expect(await json(["users", "-n", "1"])).toMatchObject({ items: [{ userId: "ann", sessions: 1 }], nextCursor: expect.any(String) });
  });

  it("checkpoints: filtered by name, session and auto; paged with -n and --cursor", async () => {
    const text = await lines(["checkpoints", "-u", "ann", "--name", "greeted"]);
    expect(text[0]).toMatch(/^ID\s+NAME\s+SESSION\s+BRANCH\s+POS\s+CREATED\s+EXPIRES$/);
    expect(text[1]).toMatch(new RegExp(`^${ids.greeted}\\s+greeted\\s+${ids.session}\\s+br_\\S+\\s+3\\s+${ISO.source}\\s+-$`));
    const first = await json(["checkpoints", "-u", "ann", "-s", ids.session, "--no-auto", "-n", "1"]);
    expect(first.items.map((c: { id: string }) => c.id)).toEqual([ids.later]);
    const second = await json(["checkpoints", "-u", "ann", "-n", "1", "--cursor", first.nextCursor]);
    expect(second).toMatchObject({ items: [{ id: ids.greeted }], nextCursor: null });
    expect((await json(["checkpoints", "-u", "ann", "--auto"])).items).toEqual([]);
    expect((await json(["checkpoints", "-u", "ann", "--since", "2000-01-01"])).items).toHaveLength(2);
  });

  it("history: the latest -n messages oldest first, and --cursor goes further back", async () => {
    const text = await lines(["history", ids.session, "-u", "ann"]);
    expect(text).toEqual([
      expect.stringMatching(/^POS\s+ROLE\s+CONTENT\s+ID$/),
      expect.stringMatching(new RegExp(`^1\\s+user\\s+hello\\s+${ids.hello}$`)),
      expect.stringMatching(/^2\s+assistant\s+\{"parts":\["hi"\]\}\s+msg_\S+$/),
      expect.stringMatching(new RegExp(`^4\\s+user\\s+more\\s+${ids.more}$`)),
    ]);
    const last = await json(["history", ids.session, "-u", "ann", "-n", "2"]);
    expect(last.items.map((m: { content: unknown }) => m.content)).toEqual([{ parts: ["hi"] }, "more"]);
    const earlier = await json(["history", ids.session, "-u", "ann", "-n", "2", "--cursor", last.nextCursor]);
    expect(earlier).toMatchObject({ items: [{ content: "hello", position: 1 }], nextCursor: null });
    expect((await lines(["history", ids.session, "-u", "ann", "-n", "1"])).at(-1)).toMatch(/^next page: --cursor \S+$/);
    const bad = await run(["history", ids.session, "-u", "ann", "--cursor", "nonsense"], { status: 1 });
    // A bad cursor is bad input, reported as the other listings report theirs: a typed error with its code.
    expect(bad.stderr).toBe("error VALIDATION_ERROR: cursor: is not a cursor that history printed\n");
  });

  it("timeline: newest first, paged", async () => {
    const text = await lines(["timeline", ids.session, "-u", "ann", "-n", "3"]);
    expect(text[0]).toMatch(/^AT\s+KIND\s+BRANCH\s+ID\s+SUMMARY$/);
    expect(text[1]).toMatch(new RegExp(`^${ISO.source}\\s+checkpoint\\s+br_\\S+\\s+${ids.later}\\s+checkpoint "later"$`));
    expect(text.at(-1)).toMatch(/^next page: --cursor \S+$/);
    const page = await json(["timeline", ids.session, "-u", "ann", "-n", "3"]);
    expect(page.items.map((e: { kind: string }) => e.kind)).toEqual(["checkpoint", "tool", "state"]);
    expect((await json(["timeline", ids.session, "-u", "ann", "--cursor", page.nextCursor])).items[0].kind).toBe("message");
  });
});

describe("reading one session", () => {
  it("summary", async () => {
    const text = await lines(["summary", ids.session, "-u", "ann"]);
    expect(text[0]).toMatch(new RegExp(`^${ids.session}  CLI test  updated ${ISO.source}$`));
    expect(text[2]).toBe("last message user: more");
    expect(text[4]).toBe("tool calls   1 on this lineage (1 succeeded, 0 failed, 0 running); 1 applied in the world");
    expect(await json(["summary", ids.session, "-u", "ann"])).toMatchObject({ branches: 1, checkpoints: 2, messages: 3 });
  });

  it("show: a checkpoint restored, by its id alone", async () => {
    const text = await lines(["show", ids.later, "-u", "ann"]);
    expect(text.slice(0, 5)).toEqual([
      `checkpoint ${ids.later} "later"`,
      expect.stringMatching(new RegExp(`^session    ${ids.session}, branch br_\\S+, position 6$`)),
      expect.stringMatching(/^created    /),
      expect.stringMatching(/^checksum   [0-9a-f]{64} \(verified\)$/),
      `state      {"city":"Porto","days":3}`,
    ]);
    expect(text).toContain("history (3 messages)");
    expect(text).toContain("tool track (1 calls)");
    expect(text.at(-1)).toMatch(/^6\s+search\s+succeeded\s+yes\s+\{"q":"hotels"\}$/);
    expect(await json(["show", ids.greeted, "-u", "ann"])).toMatchObject({
      checkpoint: { id: ids.greeted },
      state: { city: "Lisbon" },
      history: [{}, {}],
      toolTrack: [],
    });
    expect((await run(["show", ids.greeted, "-u", "bob"], { status: 1 })).stderr).toBe(
      `error NOT_FOUND: checkpoint not found: "${ids.greeted}"\n`,
    );
  });

  it("diff: state paths, messages and tool calls of two checkpoints", async () => {
    const text = await lines(["diff", ids.session, ids.greeted, ids.later, "-u", "ann"]);
    expect(text).toEqual([
      "state: 1 added, 0 removed, 1 changed",
      "  + days: 3",
      "  ~ city: Lisbon -> Porto",
      `messages: 2 in common, 0 only in ${ids.greeted}, 1 only in ${ids.later}`,
      "  B    4  user: more",
      `tool calls: 0 in common, 0 only in ${ids.greeted}, 1 only in ${ids.later}`,
      `  B    6  search {"q":"hotels"} (succeeded)`,
    ]);
    expect((await json(["diff", ids.session, ids.greeted, ids.later, "-u", "ann"])).state).toEqual({
      added: [{ path: ["days"], value: 3 }],
      removed: [],
      changed: [{ path: ["city"], from: "Lisbon", to: "Porto" }],
    });
  });

  it("export to standard output and to a file, byte for byte the same", async () => {
    const printed = (await run(["export", ids.session, "-u", "ann"])).stdout;
    const file = join(cli.dir, "export.json");
    const wrote = await run(["export", ids.session, "-u", "ann", "--out", file]);
    // It says where it wrote: the absolute path, and how much.
    const bytes = readFileSync(file).length;
    expect(wrote.stdout).toBe(`exported session ${ids.session} to ${file} (${bytes.toLocaleString("en-US")} bytes)\n`);
    expect(JSON.parse((await run(["--json", "export", ids.session, "-u", "ann", "-o", file])).stdout)).toEqual({
      exported: { sessionId: ids.session, file, bytes },
    });
    expect(`${readFileSync(file, "utf8")}\n`).toBe(printed);
    const failed = await run(["export", ids.session, "-u", "ann", "--out", join(cli.dir, "no-such-dir", "doc.json")], { status: 1 });
    expect(failed.stderr).toMatch(/^error VALIDATION_ERROR: out: cannot write .*no-such-dir.*\n$/);
  });

  it("verify, as text and JSON", async () => {
    expect(await lines(["verify"])).toEqual(["ok: 2 session(s) verified"]);
    expect(await json(["verify", "-s", ids.session])).toMatchObject({ ok: true, sessions: 1, problems: [] });
  });
});

describe("import", () => {
  it("from a file or from standard input, into a database it creates; a bad document creates nothing", async () => {
    const doc = (await run(["export", ids.session, "-u", "ann"])).stdout;
    const copy = join(cli.dir, "copy.db");
    const fromStdin = await runInProcess(["--db", copy, "import", "-", "-u", "cy"], { input: doc });
    expect([fromStdin.status, fromStdin.stdout, fromStdin.stderr]).toEqual([0, `imported session ${ids.session} for cy\n`, ""]);
    expect(JSON.parse((await runInProcess(["--db", copy, "--json", "history", ids.session, "-u", "cy"])).stdout).items).toHaveLength(3);
    const again = await runInProcess(["--db", copy, "--json", "import", "-", "-u", "cy"], { input: doc });
    expect([again.status, again.stderr]).toEqual([1, expect.stringMatching(/^error CONFLICT: /)]);
    const fresh = join(cli.dir, "fresh.db");
    const bad = await runInProcess(["--db", fresh, "import", "-", "-u", "cy"], { input: "{ not json" });
    expect([bad.status, bad.stderr]).toEqual([
      1,
      expect.stringMatching(/^error VALIDATION_ERROR: file: cannot read a JSON document from standard input: /),
    ]);
    expect(existsSync(fresh)).toBe(false);
    // JSON that is no export: refused by the import itself, tried in memory first, so the file is never made (a file
    // made and removed again would take with it what another writer put in it meanwhile).
    const made: string[] = [];
    const watcher = watch(cli.dir, (_event, name) => name?.startsWith("fresh.db") && made.push(name));
    const refused = await runInProcess(["--db", fresh, "import", "-", "-u", "cy"], { input: '{"format":"nope"}' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    watcher.close();
    expect([refused.status, refused.stderr]).toEqual([1, expect.stringMatching(/^error VALIDATION_ERROR: /)]);
    expect(made).toEqual([]);
    expect(readdirSync(cli.dir).filter((f) => f.startsWith("fresh.db"))).toEqual([]);
    // Into a database that was there: it stays.
    expect((await runInProcess(["--db", copy, "import", "-", "-u", "cy"], { input: '{"format":"nope"}' })).status).toBe(1);
    expect(JSON.parse((await runInProcess(["--db", copy, "--json", "history", ids.session, "-u", "cy"])).stdout).items).toHaveLength(3);
    const file = join(cli.dir, "doc.json");
    await run(["export", ids.session, "-u", "ann", "-o", file]);
    expect(JSON.parse((await runInProcess(["--db", fresh, "--json", "import", file, "-u", "dee"])).stdout)).toEqual({
      sessionId: ids.session,
      userId: "dee",
    });
  });
});

describe("moves and edits", () => {
  /** A fresh copy of the test session in its own database, so moves do not disturb the other tests. */
  async function copyDb(name: string): Promise<string> {
    const file = join(cli.dir, name);
    await runInProcess(["--db", file, "import", "-", "-u", "ann"], { input: (await run(["export", ids.session, "-u", "ann"])).stdout });
    return file;
  }

  it("plan and rollback --dry-run tell the same; rollback makes a branch the tree then shows", async () => {
    const file = await copyDb("moves.db");
    const at = (args: string[]) => runInProcess(["--db", file, ...args]);
    const plan = (await at(["plan", ids.session, "--checkpoint", ids.greeted, "-u", "ann"])).stdout.trimEnd().split("\n");
    expect(plan).toEqual([
      expect.stringMatching(/^would create a branch from br_\S+ at position 3$/),
      "left behind   3 entries (1 messages, 1 tool calls, 1 state changes)",
    ]);
    const dry = JSON.parse((await at(["--json", "rollback", ids.session, ids.greeted, "-u", "ann", "--dry-run"])).stdout);
    expect(dry).toEqual(JSON.parse((await at(["--json", "plan", ids.session, "-c", ids.greeted, "-u", "ann"])).stdout));
    expect(dry.leftBehind).toHaveLength(3);
    const rolled = await at(["rollback", ids.session, ids.greeted, "-u", "ann"]);
    expect([rolled.status, rolled.stdout]).toEqual([0, expect.stringMatching(/^now on branch br_\S+ at position 3\n$/)]);
    // Now the session is there: the plan, the dry run and the rollback itself agree that nothing moves.
    const fork = /br_\S+/.exec(rolled.stdout)![0];
    const already = `already there: branch ${fork} at position 3; nothing would move, no branch is made`;
    expect((await at(["plan", ids.session, "-c", ids.greeted, "-u", "ann"])).stdout).toBe(
      `${already}\nleft behind   0 entries (0 messages, 0 tool calls, 0 state changes)\n`,
    );
    expect((await at(["rollback", ids.session, ids.greeted, "-u", "ann", "--dry-run"])).stdout.split("\n")[0]).toBe(already);
    const again = await at(["rollback", ids.session, ids.greeted, "-u", "ann"]);
    expect([again.status, again.stdout]).toEqual([
      0,
      `already there: still on branch ${fork} at position 3; nothing moved, no branch was made\n`,
    ]);
    const tree = (await at(["tree", ids.session, "-u", "ann"])).stdout.trimEnd().split("\n");
    expect(tree).toEqual([
      expect.stringMatching(/^br_\S+  root, head 6$/),
      expect.stringMatching(new RegExp(`^└── br_\\S+  rollback at 3 from checkpoint ${ids.greeted}, head 3  \\* current$`)),
    ]);
    const json = JSON.parse((await at(["--json", "tree", ids.session, "-u", "ann"])).stdout);
    expect(json).toMatchObject([
      { reason: "root", current: false, children: [{ reason: "rollback", current: true, forkCheckpointId: ids.greeted, children: [] }] },
    ]);
    const root = json[0].id;
    const switched = JSON.parse((await at(["--json", "switch", ids.session, root, "-u", "ann"])).stdout);
    expect(switched).toMatchObject({ branch: { id: root, current: true }, undone: [], replayed: [] });
    // A second switch to it changes nothing, and says so.
    expect((await at(["switch", ids.session, root, "-u", "ann"])).stdout).toBe(
      `already there: still on branch ${root} at position 6; nothing moved, no branch was made\n`,
    );
  });

  it("undo takes the last move back and redo does it again, each printing where the session is", async () => {
    const file = await copyDb("undo.db");
    const at = (args: string[]) => runInProcess(["--db", file, ...args]);
    const nothing = await at(["undo", ids.session, "-u", "ann"]);
    expect([nothing.status, nothing.stdout, nothing.stderr]).toEqual([1, "", expect.stringMatching(/^error NOTHING_TO_UNDO: /)]);
    const rolled = JSON.parse((await at(["--json", "rollback", ids.session, ids.greeted, "-u", "ann"])).stdout);
    const root = rolled.branch.parentId;

    // The recorded search call (imported with the copy: never applied here) is passed over, and said so.
    const undone = await at(["undo", ids.session, "-u", "ann"]);
    expect([undone.status, undone.stdout.split("\n")]).toEqual([
      0,
      ["undid the last move", `now on branch ${root} at position 6`, "not replayed  1", expect.stringMatching(/^  search tc_\S+ /), ""],
    ]);
    const tree = JSON.parse((await at(["--json", "tree", ids.session, "-u", "ann"])).stdout);
    expect(tree).toMatchObject([{ id: root, current: true, children: [{ id: rolled.branch.id, current: false }] }]);

    const redone = JSON.parse((await at(["--json", "redo", ids.session, "-u", "ann"])).stdout);
    expect(redone).toMatchObject({ branch: { id: rolled.branch.id, head: 3, current: true }, undone: [], replayed: [] });
    const again = await at(["redo", ids.session, "-u", "ann"]);
    expect([again.status, again.stderr]).toEqual([1, expect.stringMatching(/^error NOTHING_TO_REDO: /)]);
    expect((await at(["undo", ids.session, "-u", "ann"])).stdout).toMatch(
      new RegExp(`^undid the last move\nnow on branch ${root} at position 6\n`),
    );
    expect((await at(["redo", ids.session, "-u", "ann"])).stdout).toMatch(
      new RegExp(`^redid the move\nnow on branch ${rolled.branch.id} at position 3\n`),
    );
    expect((await at(["undo", ids.session, "-u", "bob"])).status).toBe(1); // another user's session is not found
  });

  it("edit makes a version, keeping the role; versions shows the < 2/2 > picker", async () => {
    const file = await copyDb("edits.db");
    const at = (args: string[]) => runInProcess(["--db", file, ...args]);
    const edited = await at(["edit", ids.session, ids.more, "less", "-u", "ann"]);
    expect(edited.stdout).toMatch(/^new message msg_\S+ at position 4: user: less\nnow on branch br_\S+ at position 4\n$/);
    const versions = (await at(["versions", ids.session, ids.more, "-u", "ann"])).stdout.trimEnd().split("\n");
    expect(versions).toEqual([
      "< 1/2 >",
      expect.stringMatching(/^#\s+BRANCH\s+MESSAGE\s+ROLE\s+CONTENT$/),
      expect.stringMatching(new RegExp(`^\\*1\\s+br_\\S+\\s+${ids.more}\\s+user\\s+more$`)),
      expect.stringMatching(/^ 2\s+br_\S+\s+msg_\S+\s+user\s+less$/),
    ]);
    const json = JSON.parse(
      (await at(["--json", "edit", ids.session, ids.more, '{"parts":["x"]}', "--json-content", "--role", "assistant", "-u", "ann"])).stdout,
    );
    expect(json.message).toMatchObject({ role: "assistant", content: { parts: ["x"] }, position: 4 });
    expect(JSON.parse((await at(["--json", "versions", ids.session, json.message.id, "-u", "ann"])).stdout)).toMatchObject({
      index: 2,
      count: 3,
    });
    expect((await at(["edit", ids.session, ids.more, "{", "--json-content", "-u", "ann"])).status).toBe(2);
  });

  it("delete: a checkpoint, then the whole session", async () => {
    const file = await copyDb("delete.db");
    const at = (args: string[]) => runInProcess(["--db", file, ...args]);
    expect((await at(["delete", ids.session, ids.greeted, "-u", "ann"])).stdout).toBe(
      `deleted checkpoint ${ids.greeted} of session ${ids.session}\n`,
    );
    expect(JSON.parse((await at(["--json", "checkpoints", "-u", "ann"])).stdout).items.map((c: { id: string }) => c.id)).toEqual([
      ids.later,
    ]);
    expect(JSON.parse((await at(["--json", "delete", ids.session, "-u", "ann"])).stdout)).toEqual({ deleted: { sessionId: ids.session } });
    expect((await at(["sessions", "-u", "ann"])).stdout).toBe("no sessions\n");
    const again = await at(["delete", ids.session, "-u", "ann"]);
    expect([again.status, again.stderr]).toEqual([1, `error NOT_FOUND: session not found: "${ids.session}"\n`]);
  });
});

describe("maintenance", () => {
  it("prune and recover, as text and JSON", async () => {
    const file = join(cli.dir, "maint.db");
    await runInProcess(["--db", file, "import", "-", "-u", "ann"], { input: (await run(["export", ids.session, "-u", "ann"])).stdout });
    const at = (args: string[]) => runInProcess(["--db", file, ...args]);
    expect((await at(["prune"])).stdout.split("\n")[0]).toBe(
      "deleted 0 expired checkpoint(s), 0 unreferenced state(s), 0 finished move journal(s)",
    );
    expect(JSON.parse((await at(["--json", "prune", "--no-vacuum"])).stdout)).toMatchObject({ checkpoints: 0, snapshots: 0, moves: 0 });
    expect((await at(["recover"])).stdout).toBe(
      "resumed 0 move(s), 0 waiting, 0 failed; 0 workspace restore(s); 0 call(s) of unknown outcome\n",
    );
    expect(JSON.parse((await at(["--json", "recover"])).stdout)).toEqual({
      resumed: [],
      waiting: [],
      failed: [],
      unknown: [],
      workspaces: [],
    });
  });

  it("demo creates a database every command can be tried on; --json gives its ids", async () => {
    const file = join(cli.dir, "demo", "demo.db");
    const missing = cli.run(["--db", file, "demo"]);
    expect(missing.status).toBe(1); // its directory does not exist: nothing is created
    const dir = join(cli.dir, "demo-here");
    const r = cli.run(["--db", join(dir, "..", "demo.db"), "--json", "demo", "--files", join(cli.dir, "demo-files")]);
    expect(r.status).toBe(0);
    const ids = JSON.parse(r.stdout);
    expect(ids).toMatchObject({
      userId: "demo",
      chat: { sessionId: expect.stringMatching(/^ses_/), checkpointIds: [expect.any(String), expect.any(String)] },
    });
    expect(ids.tools).toMatch(/demo[/\\]tools\.js$/);
    const at = (args: string[]) => runInProcess(["--db", join(cli.dir, "demo.db"), ...args]);
    expect((await at(["verify"])).stdout).toBe("ok: 2 session(s) verified\n");
    expect((await at(["versions", ids.chat.sessionId, ids.chat.editedMessageId, "-u", "demo"])).stdout).toMatch(/^< 2\/2 >\n/);
    const replayed = JSON.parse(
      (await at(["--json", "--tools", ids.tools, "switch", ids.agent.sessionId, ids.agent.filesBranchId, "-u", "demo"])).stdout,
    );
    expect(replayed.replayed).toHaveLength(3);
  });

  it("demo's suggested commands run as printed, quoting a path a shell would split", async () => {
    const dir = join(cli.dir, "my demo's dir");
    mkdirSync(dir);
    const r = cli.run(["--db", join(dir, "d.db"), "demo", "--files", join(dir, "files")]);
    const suggested = r.stdout.split("\n").filter((l) => l.startsWith("  forkpoint "));
    expect(suggested.length).toBeGreaterThanOrEqual(10);
    // The first through the shell and the binary; the others as the shell splits them, each run in this process.
    const [first, ...others] = suggested;
    const s = spawnSync("sh", ["-c", `forkpoint() { "${process.execPath}" "${cli.bin}" "$@"; }\n${first}`], { encoding: "utf8" });
    expect([first, s.status, s.stderr]).toEqual([first, 0, ""]);
    for (const line of others) {
      const split = spawnSync("sh", ["-c", `forkpoint() { printf '%s\\0' "$@"; }\n${line}`], { encoding: "utf8" });
      expect([line, split.status]).toEqual([line, 0]);
      const args = split.stdout.split("\0").slice(0, -1);
      // The web view serves until stopped (tests/demo.test.ts starts it as printed): its arguments as the shell reads them.
      if (args[2] === "ui") {
        expect(args).toEqual(["--db", join(dir, "d.db"), "ui", "--allow-writes", "--tools", expect.stringMatching(/tools\.(ts|js)$/)]);
        continue;
      }
      const ran = await runInProcess(args);
      expect([line, ran.status, ran.stderr]).toEqual([line, 0, ""]);
    }
  });

  it("ui reads never create a database: a missing one is one line, exit 1", async () => {
    const missing = join(cli.dir, "no-such.db");
    const r = await runInProcess(["--db", missing, "ui"]);
    expect([r.status, r.stderr]).toEqual([
      1,
      `error NO_DATABASE: no database at ${missing} (give --db or FORKPOINT_DB; only import and demo create one)\n`,
    ]);
    expect(existsSync(missing)).toBe(false);
  });
});

describe("the installed binary", () => {
  /** Both ways on databases of their own made from the test database, so that a move's new ids can be told apart. */
  async function bothWays(args: string[], input?: string): Promise<[unknown, unknown]> {
    const doc = (await run(["export", ids.session, "-u", "ann"])).stdout;
    const copies = ["spawned", "in-process"].map((way) => join(cli.dir, `${way}-${args.join("-").replace(/\W/g, "")}.db`));
    for (const copy of copies) await runInProcess(["--db", copy, "import", "-", "-u", "ann"], { input: doc });
    const spawned = cli.run(["--db", copies[0]!, ...args], { input });
    const inProcess = await runInProcess(["--db", copies[1]!, ...args], { input });
    // Ids a command makes (a branch, a message) are random and its times are its own: each stands for itself.
    const same = (r: { status: number | null; stdout: string; stderr: string }) =>
      [r.status, r.stdout, r.stderr].map((v) =>
        typeof v === "string" ? v.replace(/\b(br|msg)_[0-9a-z]+/g, "$1_*").replace(new RegExp(ISO.source, "g"), "<time>") : v,
      );
    return [same(spawned), same(inProcess)];
  }

  // One command of each family, text and JSON, failures included: the process prints what the in-process runs print.
  it.each([
    ["listings", ["sessions", "-u", "ann"]],
    ["listings", ["--json", "history", "SESSION", "-u", "ann", "-n", "2"]],
    ["reads", ["show", "LATER", "-u", "ann"]],
    ["reads", ["export", "SESSION", "-u", "ann"]],
    ["reads", ["show", "GREETED", "-u", "bob"]],
    ["moves", ["rollback", "SESSION", "GREETED", "-u", "ann"]],
    ["moves", ["--json", "edit", "SESSION", "MORE", "less", "-u", "ann"]],
    ["maintenance", ["verify"]],
    ["maintenance", ["recover"]],
    ["errors", ["history", "SESSION", "-u", "ann", "--cursor", "nonsense"]],
  ])("%s: forkpoint %j", async (_family, template) => {
    const named: Record<string, string> = { SESSION: ids.session, LATER: ids.later, GREETED: ids.greeted, MORE: ids.more };
    const [spawned, inProcess] = await bothWays((template as string[]).map((a) => named[a] ?? a));
    expect(inProcess).toEqual(spawned);
  });

  it("import from standard input", async () => {
    const doc = (await run(["export", ids.session, "-u", "ann"])).stdout;
    const spawned = cli.run(["--db", join(cli.dir, "import-spawned.db"), "import", "-", "-u", "cy"], { input: doc });
    const inProcess = await runInProcess(["--db", join(cli.dir, "import-in-process.db"), "import", "-", "-u", "cy"], { input: doc });
    expect([inProcess.status, inProcess.stdout, inProcess.stderr]).toEqual([spawned.status, spawned.stdout, spawned.stderr]);
    expect(spawned.stdout).toBe(`imported session ${ids.session} for cy\n`);
  });
});
