// Lone surrogates: every string that crosses the API is refused with MALFORMED_TEXT naming the field (nothing written),
// well-formed astral text round-trips exactly; a tool's result holding one fails the call, its error message keeps U+FFFD.
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ValidationError, checkpointTools, defineTool, type Forkpoint, type SessionExport, type SessionHandle } from "../../src/index.js";
import {
  EMPTY_STATE_HASH,
  GENESIS_HASH,
  canonicalJson,
  entryHash,
  portableChecksum,
  sha256,
  toolResultHash,
} from "../../src/sessions/integrity/hashes.js";
import { isWellFormed } from "../../src/models/strings.js";
import { makeTempDir, rejectionOf, removeDir, tempDatabases } from "../helpers.js";
import { dumpOf, openForkpoint } from "../fixtures/backend.js";

/** Half of a pair, and each half of an emoji cut in two. */
const LONE = [
  ["a high surrogate", "\ud800"],
  ["an emoji's first half", "😀".slice(0, 1)],
  ["an emoji's second half", "😀".slice(1)],
] as const;
/** How an error's field path writes a lone surrogate that is an object key. */
const escaped = (lone: string) => `\\u${lone.charCodeAt(0).toString(16)}`;
const bad = <T>(value: unknown) => value as T;

let dir: string;
let file: string;
let fp: Forkpoint;
let s: SessionHandle;
let ids: { checkpoint: string; message: string; branch: string };

beforeAll(async () => {
  dir = makeTempDir("forkpoint-hostile-");
  file = path.join(dir, "hostile.db");
  fp = openForkpoint({ path: file, tools: [defineTool({ name: "echo", run: (args) => args })] });
  s = await fp.createSession({ userId: "alice", title: "main" });
  const [m] = await s.append([
    { role: "user", content: "hello" },
    { role: "assistant", content: "hi" },
  ]);
  await s.setState({ step: 1 });
  const cp = await s.checkpoint({ name: "cp" });
  ids = { checkpoint: cp.id, message: m!.id, branch: (await s.info()).currentBranchId };
});

afterAll(async () => {
  await fp.close();
  removeDir(dir);
});

/** Each call that takes a string, with the lone surrogate placed in it, and the field the error must name. */
const cases: { what: string; call: (lone: string) => Promise<unknown>; field: (lone: string) => string }[] = [
  // sessions
  { what: "createSession userId", call: (x) => fp.createSession({ userId: `al${x}ice` }), field: () => "userId" },
  { what: "createSession title", call: (x) => fp.createSession({ userId: "alice", title: x }), field: () => "title" },
  {
    what: "createSession metadata value",
    call: (x) => fp.createSession({ userId: "alice", metadata: { note: [x] } }),
    field: () => "metadata.note[0]",
  },
  {
    what: "createSession metadata key",
    call: (x) => fp.createSession({ userId: "alice", metadata: { [x]: 1 } }),
    field: (x) => `metadata.${escaped(x)}`,
  },
  { what: "getSession id", call: (x) => fp.getSession(x, { userId: "alice" }), field: () => "sessionId" },
  { what: "getSession userId", call: (x) => fp.getSession(s.id, { userId: x }), field: () => "userId" },
  { what: "handoff target userId", call: (x) => s.handoff(ids.checkpoint, { userId: x }), field: () => "userId" },
  { what: "handoff target title", call: (x) => s.handoff(ids.checkpoint, { userId: "bob", title: x }), field: () => "title" },
  // messages
  { what: "append role", call: (x) => s.append({ role: x, content: "x" }), field: () => "message.role" },
  { what: "append clientId", call: (x) => s.append({ role: "user", content: "x", clientId: `c-${x}` }), field: () => "message.clientId" },
  { what: "append string content", call: (x) => s.append({ role: "user", content: `say ${x}` }), field: () => "message.content" },
  {
    what: "append content parts",
    call: (x) => s.append({ role: "user", content: [{ type: "text", text: x }] }),
    field: () => "message.content[0].text",
  },
  {
    what: "append content key",
    call: (x) => s.append({ role: "user", content: { [x]: "v" } }),
    field: (x) => `message.content.${escaped(x)}`,
  },
  {
    what: "append metadata value",
    call: (x) => s.append({ role: "user", content: "x", metadata: { tag: x } }),
    field: () => "message.metadata.tag",
  },
  {
    what: "append metadata key",
    call: (x) => s.append({ role: "user", content: "x", metadata: { [x]: true } }),
    field: (x) => `message.metadata.${escaped(x)}`,
  },
  {
    what: "append batch whose second message is malformed (the first is not stored either)",
    call: (x) =>
      s.append([
        { role: "user", content: "fine" },
        { role: "assistant", content: x },
      ]),
    field: () => "messages[1].content",
  },
  { what: "turn message", call: (x) => s.turn([{ role: "user", content: x }], { name: "t" }), field: () => "messages[0].content" },
  { what: "turn checkpoint name", call: (x) => s.turn([{ role: "user", content: "ok" }], { name: x }), field: () => "name" },
  { what: "edit content", call: (x) => s.edit(ids.message, { role: "user", content: { text: x } }), field: () => "message.content.text" },
  { what: "edit role", call: (x) => s.edit(ids.message, { role: x, content: "x" }), field: () => "message.role" },
  { what: "edit message id", call: (x) => s.edit(x, { role: "user", content: "x" }), field: () => "messageId" },
  // state
  { what: "setState string", call: (x) => s.setState(x), field: () => "state" },
  { what: "setState nested value", call: (x) => s.setState({ a: { b: [1, x] } }), field: () => "state.a.b[1]" },
  { what: "setState key", call: (x) => s.setState({ [x]: 1 }), field: (x) => `state.${escaped(x)}` },
  { what: "setState updater result", call: (x) => s.setState(() => ({ note: x })), field: () => "state.note" },
  // checkpoints
  { what: "checkpoint name", call: (x) => s.checkpoint({ name: x }), field: () => "name" },
  { what: "checkpoint metadata", call: (x) => s.checkpoint({ metadata: { by: x } }), field: () => "metadata.by" },
  { what: "restore id", call: (x) => s.restore(x), field: () => "checkpointId" },
  { what: "rollback id", call: (x) => s.rollback(x), field: () => "checkpointId" },
  { what: "deleteCheckpoint id", call: (x) => s.deleteCheckpoint(x), field: () => "checkpointId" },
  { what: "diff id", call: (x) => s.diff(ids.checkpoint, x), field: () => "checkpointB" },
  { what: "plan target", call: (x) => s.plan({ checkpointId: x }), field: () => "checkpointId" },
  // branches and versions
  { what: "switchBranch id", call: (x) => s.switchBranch(x), field: () => "branchId" },
  { what: "history branchId", call: (x) => s.history({ branchId: x }), field: () => "branchId" },
  { what: "toolTrack branchId", call: (x) => s.toolTrack({ branchId: x }), field: () => "branchId" },
  { what: "versions message id", call: (x) => s.versions(x), field: () => "messageId" },
  // tools
  { what: "invoke tool name", call: (x) => s.invoke(`echo${x}`), field: () => "tool" },
  { what: "invoke args", call: (x) => s.invoke("echo", { text: x }), field: () => "args.text" },
  { what: "invoke args key", call: (x) => s.invoke("echo", { [x]: 1 }), field: (x) => `args.${escaped(x)}` },
  { what: "recordToolCall tool", call: (x) => s.recordToolCall({ tool: x, args: {} }), field: () => "tool" },
  { what: "recordToolCall callId", call: (x) => s.recordToolCall({ tool: "t", args: {}, callId: x }), field: () => "callId" },
  { what: "recordToolCall args", call: (x) => s.recordToolCall({ tool: "t", args: { q: x } }), field: () => "args.q" },
  { what: "recordToolCall result", call: (x) => s.recordToolCall({ tool: "t", args: {}, result: [x] }), field: () => "result[0]" },
  { what: "recordToolCall error text", call: (x) => s.recordToolCall({ tool: "t", args: {}, error: x }), field: () => "error" },
  {
    what: "recordToolCall error message",
    call: (x) => s.recordToolCall({ tool: "t", args: {}, error: { message: x } }),
    field: () => "error.message",
  },
  // listings
  { what: "listSessions userId", call: (x) => fp.listSessions({ userId: x }), field: () => "userId" },
  { what: "listSessions cursor", call: (x) => fp.listSessions({ userId: "alice", cursor: x }), field: () => "cursor" },
  { what: "listCheckpoints userId", call: (x) => fp.listCheckpoints({ userId: x }), field: () => "userId" },
  { what: "listCheckpoints name", call: (x) => fp.listCheckpoints({ userId: "alice", name: x }), field: () => "name" },
  { what: "listCheckpoints sessionId", call: (x) => fp.listCheckpoints({ userId: "alice", sessionId: x }), field: () => "sessionId" },
  { what: "listCheckpoints cursor", call: (x) => fp.listCheckpoints({ userId: "alice", cursor: x }), field: () => "cursor" },
  { what: "a session's listCheckpoints name", call: (x) => s.listCheckpoints({ name: x }), field: () => "name" },
  { what: "timeline cursor", call: (x) => s.timeline({ cursor: x }), field: () => "cursor" },
  // operator calls and transfer
  { what: "exportSession id", call: (x) => fp.exportSession(x, { userId: "alice" }), field: () => "sessionId" },
  { what: "exportSession userId", call: (x) => fp.exportSession(s.id, { userId: x }), field: () => "userId" },
  { what: "verify sessionId", call: (x) => fp.verify({ sessionId: x }), field: () => "sessionId" },
];

/** The calls whose string goes to a plain-text field (an id, a name, a title, a cursor), not into a JSON value. */
const PLAIN = new Set([
  "createSession userId",
  "createSession title",
  "getSession id",
  "getSession userId",
  "handoff target userId",
  "handoff target title",
  "append role",
  "append clientId",
  "turn checkpoint name",
  "edit role",
  "edit message id",
  "checkpoint name",
  "restore id",
  "rollback id",
  "deleteCheckpoint id",
  "diff id",
  "plan target",
  "switchBranch id",
  "history branchId",
  "toolTrack branchId",
  "versions message id",
  "invoke tool name",
  "recordToolCall tool",
  "recordToolCall callId",
  "listSessions userId",
  "listSessions cursor",
  "listCheckpoints userId",
  "listCheckpoints name",
  "listCheckpoints sessionId",
  "listCheckpoints cursor",
  "a session's listCheckpoints name",
  "timeline cursor",
  "exportSession id",
  "exportSession userId",
  "verify sessionId",
]);

// PostgreSQL's text cannot hold U+0000, so no store takes it in a plain-text field; inside JSON it is an escape.
describe("a NUL in a plain-text field is refused the same way on every store; inside JSON it round-trips", () => {
  for (const c of cases.filter((x) => PLAIN.has(x.what))) {
    it(c.what, async () => {
      const before = await dumpOf(file);
      const e = await rejectionOf(() => c.call("\0"));
      expect(e).toBeInstanceOf(ValidationError);
      expect(e).toMatchObject({ code: "MALFORMED_TEXT", field: c.field("\0") });
      expect(e.message).toContain("NUL");
      expect(await dumpOf(file)).toEqual(before);
    });
  }

  it("in content, metadata, state and tool args it is stored and read back exactly", async () => {
    const session = await fp.createSession({ userId: "alice", metadata: { k: "a\0b" } });
    const [m] = await session.append({ role: "user", content: { text: "x\0y" }, metadata: { "\0": "\0" } });
    await session.setState({ s: "\0" });
    const result = await session.invoke("echo", { t: "\0" });
    expect((await session.info()).metadata).toEqual({ k: "a\0b" });
    expect((await session.history()).find((h) => h.id === m!.id)).toMatchObject({ content: { text: "x\0y" }, metadata: { "\0": "\0" } });
    expect(await session.getState()).toEqual({ s: "\0" });
    expect(result).toEqual({ t: "\0" });
    expect((await session.toolTrack()).map((t) => [t.args, t.result])).toEqual([[{ t: "\0" }, { t: "\0" }]]);
    // Checkpoint metadata: a NUL key is stored but not indexed (filters name plain-text keys); a NUL value filters.
    const cp = await session.checkpoint({ metadata: { "k\0": 1, tag: "a\0" } });
    expect((await session.restore(cp.id)).checkpoint.metadata).toEqual({ "k\0": 1, tag: "a\0" });
    expect((await fp.listCheckpoints({ userId: "alice", metadata: { tag: "a\0" } })).items.map((c) => c.id)).toEqual([cp.id]);
    await expect(fp.listCheckpoints({ userId: "alice", metadata: { "k\0": 1 } })).rejects.toMatchObject({ code: "MALFORMED_TEXT" });
    expect((await fp.verify({ sessionId: session.id })).ok).toBe(true);
    const doc = await fp.exportSession(session.id, { userId: "alice" });
    await fp.deleteSession(session.id, { userId: "alice" });
    const imported = await fp.importSession(doc, { userId: "alice" });
    expect((await fp.listCheckpoints({ userId: "alice", metadata: { tag: "a\0" } })).items).toHaveLength(1);
    await fp.deleteSession(imported.id, { userId: "alice" });
  });
});

describe("a lone surrogate in any string crossing the API is refused, naming the field, and nothing is written", () => {
  for (const c of cases) {
    for (const [kind, lone] of LONE) {
      it(`${c.what}: ${kind}`, async () => {
        const before = await dumpOf(file);
        const e = await rejectionOf(() => c.call(lone));
        expect(e).toBeInstanceOf(ValidationError);
        expect(e.code).toBe("MALFORMED_TEXT");
        expect(e.field).toBe(c.field(lone));
        expect(e.message).toContain("lone surrogate");
        // The error itself holds only well-formed text (it may be logged or sent as JSON).
        expect(isWellFormed(e.message)).toBe(true);
        expect(isWellFormed(e.field)).toBe(true);
        expect(await dumpOf(file)).toEqual(before);
      });
    }
  }

  it("importSession's userId", async () => {
    const doc = await fp.exportSession(s.id, { userId: "alice" });
    const e = await rejectionOf(() => tempFp().importSession(doc, { userId: "b\ud800" }));
    expect(e).toMatchObject({ code: "MALFORMED_TEXT", field: "userId" });
  });

  it("attachWorkspace's exclude patterns", async () => {
    const ws = makeTempDir("forkpoint-hostile-ws-");
    try {
      const before = await dumpOf(file);
      const e = await rejectionOf(() => s.attachWorkspace(ws, { exclude: ["*.log", "\udc00"] }));
      expect(e).toMatchObject({ code: "MALFORMED_TEXT", field: "exclude.1" });
      expect(await dumpOf(file)).toEqual(before);
    } finally {
      removeDir(ws);
    }
  });

  it("the session is intact after all of it: verify is ok and the calls of the same shapes succeed", async () => {
    expect((await fp.verify()).ok).toBe(true);
    expect((await s.history()).map((m) => m.content)).toEqual(["hello", "hi"]);
    expect((await fp.listSessions({ userId: "alice" })).items.map((x) => x.id)).toEqual([s.id]);
  });
});

const dbs = tempDatabases();
function tempFp(options: Parameters<typeof dbs.open>[0] = {}): Forkpoint {
  return dbs.open(options).fp;
}

/** Astral characters, an emoji ZWJ sequence, combining marks, U+FFFD itself and the highest code point. */
const ASTRAL = ["😀", "𝄞 clef", "👩‍👩‍👧 family", "e\u0301", "\ufffd", "\u{10FFFF}", "日本語", "🇵🇹"];

describe("well-formed text, astral characters included, round-trips exactly", () => {
  it("through every field, verify, restore, export and import", async () => {
    const fp1 = tempFp({ tools: [defineTool({ name: "echo😀", run: (args) => ({ echoed: args }) })] });
    const user = `user ${ASTRAL[0]}`;
    const s1 = await fp1.createSession({ userId: user, title: ASTRAL.join(" "), metadata: { [ASTRAL[2]!]: ASTRAL } });
    const [m] = await s1.append({
      role: `role ${ASTRAL[1]}`,
      content: { parts: ASTRAL, [ASTRAL[5]!]: ASTRAL[7]! },
      clientId: `c ${ASTRAL[6]}`,
      metadata: { [ASTRAL[3]!]: ASTRAL[4]! },
    });
    await s1.setState({ [ASTRAL[0]!]: ASTRAL });
    const result = await s1.invoke("echo😀", { text: ASTRAL[2]! });
    expect(result).toEqual({ echoed: { text: ASTRAL[2] } });
    await s1.recordToolCall({ tool: `framework ${ASTRAL[0]}`, args: { q: ASTRAL[1]! }, result: ASTRAL[3]!, callId: `call ${ASTRAL[7]}` });
    const cp = await s1.checkpoint({ name: `cp ${ASTRAL[0]}`, metadata: { note: ASTRAL[5]! } });

    const info = await s1.info();
    expect(info.userId).toBe(user);
    expect(info.title).toBe(ASTRAL.join(" "));
    expect(info.metadata).toEqual({ [ASTRAL[2]!]: ASTRAL });
    const [read] = await s1.history();
    expect(read).toMatchObject({
      id: m!.id,
      role: `role ${ASTRAL[1]}`,
      content: { parts: ASTRAL, [ASTRAL[5]!]: ASTRAL[7] },
      clientId: `c ${ASTRAL[6]}`,
    });
    expect(await s1.getState()).toEqual({ [ASTRAL[0]!]: ASTRAL });
    const track = await s1.toolTrack();
    expect(track.map((t) => [t.tool, t.args, t.result, t.callId])).toEqual([
      ["echo😀", { text: ASTRAL[2] }, { echoed: { text: ASTRAL[2] } }, null],
      [`framework ${ASTRAL[0]}`, { q: ASTRAL[1] }, ASTRAL[3], `call ${ASTRAL[7]}`],
    ]);
    expect((await fp1.listCheckpoints({ userId: user, name: `cp ${ASTRAL[0]}` })).items.map((c) => c.id)).toEqual([cp.id]);
    expect((await s1.restore(cp.id)).state).toEqual({ [ASTRAL[0]!]: ASTRAL });
    expect(await fp1.verify()).toMatchObject({ ok: true, problems: [] });

    const doc = await fp1.exportSession(s1.id, { userId: user });
    const fp2 = tempFp();
    const copy = await fp2.importSession(JSON.parse(JSON.stringify(doc)), { userId: user });
    expect(await fp2.exportSession(copy.id, { userId: user })).toEqual(doc);
    expect(await copy.history()).toEqual(await s1.history());
    expect(await fp2.verify()).toMatchObject({ ok: true, problems: [] });
  });
});

// Review 18: a result is never stored as something else (as one over the payload limit is not): the call is failed,
// saying why, and the caller gets MALFORMED_TEXT. A thrown error's message is only a message: stored with U+FFFD.
describe("a tool's own output holding a lone surrogate", () => {
  it("a result (string, nested, key) fails the call with MALFORMED_TEXT; a thrown message is stored with U+FFFD", async () => {
    const undone: unknown[] = [];
    const lone = "😀".slice(0, 1);
    const tool = defineTool({
      name: "leaky",
      run: () => ({ text: `half ${lone}`, list: ["\udc00", "whole 😀"], [`k${lone}`]: "\\ud800 is only text" }),
      undo: ({ result }) => {
        undone.push(result);
      },
    });
    const thrower = defineTool({
      name: "thrower",
      run: (): null => {
        throw new Error(`broken ${lone}`);
      },
    });
    const fp1 = tempFp({ tools: [tool, thrower] });
    const s1 = await fp1.createSession({ userId: "alice" });
    const before = await s1.checkpoint({ name: "before" });
    expect(await rejectionOf(s1.invoke("leaky"))).toMatchObject({ code: "MALFORMED_TEXT", field: "result.text" });
    await expect(s1.invoke("thrower")).rejects.toThrow("broken");
    const [call, failed] = await s1.toolTrack();
    expect(call).toMatchObject({ status: "failed", result: null, error: { code: "MALFORMED_TEXT" } });
    expect(call!.error!.message).toContain("the tool ran, but its result could not be stored");
    expect(failed!.error).toEqual({ message: "broken \ufffd", name: "Error" });

    const after = await s1.checkpoint({ name: "after" });
    expect((await s1.restore(after.id)).toolTrack.map((t) => t.status)).toEqual(["failed", "failed"]);
    expect(await fp1.verify()).toMatchObject({ ok: true, problems: [] });
    const doc = await fp1.exportSession(s1.id, { userId: "alice" });
    const copy = await tempFp().importSession(JSON.parse(JSON.stringify(doc)), { userId: "alice" });
    expect((await copy.toolTrack()).map((t) => t.status)).toEqual(["failed", "failed"]);

    // Failed: no move undoes it (its record says its effect happened).
    const moved = await s1.rollback(before.id);
    expect(moved.undone).toEqual([]);
    expect(undone).toEqual([]);
    expect(await fp1.verify()).toMatchObject({ ok: true, problems: [] });
  });
});

/** Recomputes every hash and checksum of a one-branch export, as whoever crafts a document can. */
function rehash(doc: SessionExport): SessionExport {
  // RFC 8785 has no text for a lone surrogate (canonicalize throws): the forged state is hashed as JSON.stringify
  // writes it, as canonicalize 2 did. Import refuses the text before any hash is compared.
  const canonical = (value: unknown) => {
    try {
      return canonicalJson(value);
    } catch {
      return JSON.stringify(value);
    }
  };
  const states = doc.states.map((st) => ({ ...st, hash: sha256(canonical(st.value)) }));
  const stateHashes = new Map(doc.states.map((st, i) => [st.hash, states[i]!.hash]));
  let previous = GENESIS_HASH;
  const hashAt = new Map<number, string>();
  const entries = doc.entries.map((e) => {
    const state = e.state === null ? null : stateHashes.get(e.state)!;
    const row = {
      ...e,
      content: e.kind === "state" ? null : JSON.stringify(e.content),
      metadata: e.metadata === null ? null : JSON.stringify(e.metadata),
    };
    const hash = entryHash(previous, row, state);
    previous = hash;
    hashAt.set(e.position, hash);
    const c = e.completion;
    const completion = c && {
      ...c,
      hash: toolResultHash(hash, {
        entryId: e.id,
        status: c.status,
        completedAt: c.completedAt,
        result: c.status === "succeeded" ? JSON.stringify(c.result) : null,
        error: c.status === "failed" ? JSON.stringify(c.error) : null,
      }),
    };
    return { ...e, state, hash, completion };
  });
  const checkpoints = doc.checkpoints.map((c) => {
    const state = c.state === null ? null : stateHashes.get(c.state)!;
    const headHash = c.position === 0 ? GENESIS_HASH : hashAt.get(c.position)!;
    const base = {
      id: c.id,
      sessionId: doc.session.id,
      branchId: c.branchId,
      position: c.position,
      name: c.name,
      auto: c.auto,
      metadata: c.metadata === null ? null : JSON.stringify(c.metadata),
      userId: "",
      headHash,
      createdAt: c.createdAt,
      expiresAt: c.expiresAt,
    };
    return { ...c, state, headHash, checksum: portableChecksum(base, state ?? EMPTY_STATE_HASH) };
  });
  return { ...doc, states, entries, checkpoints };
}

describe("importSession refuses a document holding a lone surrogate, even with its hashes recomputed", () => {
  let doc: SessionExport;
  beforeAll(async () => {
    const source = openForkpoint({ path: path.join(dir, "source.db"), tools: [defineTool({ name: "echo", run: (args) => args })] });
    const s1 = await source.createSession({ userId: "alice", title: "t", metadata: { m: 1 } });
    await s1.append({ role: "user", content: { text: "hello" }, clientId: "c1", metadata: { k: "v" } });
    await s1.setState({ step: "one" });
    await s1.invoke("echo", { say: "hi" });
    await s1.checkpoint({ name: "cp", metadata: { by: "me" } });
    doc = JSON.parse(JSON.stringify(await source.exportSession(s1.id, { userId: "alice" })));
    await source.close();
  });

  const crafted: { what: string; edit: (d: SessionExport) => void; field: string }[] = [
    { what: "a message's role", edit: (d) => (d.entries[0]!.role = "us\ud800er"), field: "document.entries.0.role" },
    { what: "a message's content", edit: (d) => (d.entries[0]!.content = { text: "\udc00" }), field: "document.entries.0.content.text" },
    { what: "a message's clientId", edit: (d) => (d.entries[0]!.clientId = "c\ud800"), field: "document.entries.0.clientId" },
    {
      what: "a message's metadata key",
      edit: (d) => (d.entries[0]!.metadata = { ["\ud83d"]: "v" }),
      field: "document.entries.0.metadata.\\ud83d",
    },
    { what: "a state document", edit: (d) => (d.states[0]!.value = { step: "\ud800" }), field: "document.states.0.value.step" },
    { what: "a tool call's args", edit: (d) => (d.entries[2]!.content = { say: "\ude00" }), field: "document.entries.2.content.say" },
    {
      what: "a tool call's result",
      edit: (d) => (d.entries[2]!.completion!.result = { say: "\ud800" }),
      field: "document.entries.2.completion.result.say",
    },
    { what: "a tool's name", edit: (d) => (d.entries[2]!.tool = "ec\ud800ho"), field: "document.entries.2.tool" },
    { what: "a checkpoint's name", edit: (d) => (d.checkpoints[0]!.name = "\ud800"), field: "document.checkpoints.0.name" },
    {
      what: "a checkpoint's metadata",
      edit: (d) => (d.checkpoints[0]!.metadata = { by: "\udc00" }),
      field: "document.checkpoints.0.metadata.by",
    },
    { what: "the session's title", edit: (d) => (d.session.title = "t\ud800"), field: "document.session.title" },
    { what: "the session's metadata", edit: (d) => (d.session.metadata = { m: ["\ud800"] }), field: "document.session.metadata.m.0" },
  ];

  it("the rehash is sound: a well-formed change with recomputed hashes is imported", async () => {
    const d = structuredClone(doc);
    d.entries[0]!.role = "assistant 😀";
    d.states[0]!.value = { step: "two 😀" };
    const fixed = rehash(d);
    const target = dbs.open();
    const copy = await target.fp.importSession(fixed, { userId: "alice" });
    expect((await copy.history())[0]!.role).toBe("assistant 😀");
    expect(await target.fp.verify()).toMatchObject({ ok: true, problems: [] });
  });

  for (const c of crafted) {
    it(c.what, async () => {
      const d = structuredClone(doc);
      c.edit(d);
      const fresh = dbs.open();
      const before = await dumpOf(fresh.path);
      const e = await rejectionOf(() => fresh.fp.importSession(rehash(d), { userId: "alice" }));
      expect(e).toBeInstanceOf(ValidationError);
      expect(e).toMatchObject({ code: "MALFORMED_TEXT", field: c.field });
      expect(await dumpOf(fresh.path)).toEqual(before);
      expect(await fresh.fp.verify()).toMatchObject({ ok: true, problems: [] });
    });
  }
});

/** Creates `name` (raw bytes, not UTF-8) under `dir`; false where the file system refuses such a name (APFS). */
function writeRawName(dir: string, name: Buffer, content: string, directory = false): boolean {
  const full = Buffer.concat([Buffer.from(`${dir}/`), name]);
  try {
    if (directory) {
      fs.mkdirSync(full);
      fs.writeFileSync(Buffer.concat([full, Buffer.from("/inside.txt")]), content);
    } else fs.writeFileSync(full, content);
    return true;
  } catch {
    return false;
  }
}
const NOT_UTF8 = Buffer.concat([Buffer.from("bad-"), Buffer.from([0xff, 0xfe]), Buffer.from(".txt")]);
/** How forkpoint names such a file in an error: each invalid byte as U+FFFD. */
const SHOWN = "bad-\ufffd\ufffd.txt";

describe("a workspace file whose name is not UTF-8 is skipped and said (it cannot be stored as text), or excluded", () => {
  let ws: string;
  let raw = true;
  beforeEach(() => {
    ws = makeTempDir("forkpoint-hostile-names-");
    fs.writeFileSync(path.join(ws, "ok.txt"), "ok");
    // A real name holding U+FFFD itself is well-formed text, and stays an ordinary file.
    fs.writeFileSync(path.join(ws, "real \ufffd.txt"), "fffd");
    raw = writeRawName(ws, NOT_UTF8, "bad");
  });
  afterEach(() => removeDir(ws));

  it("attachWorkspace: skipped, named as it shows (U+FFFD for each byte that is not UTF-8)", async (t) => {
    if (!raw) t.skip();
    const { fp: fp1 } = dbs.open();
    const s1 = await fp1.createSession({ userId: "alice" });
    const info = await s1.attachWorkspace(ws);
    expect(info).toMatchObject({ files: 2, skipped: [{ path: SHOWN, reason: expect.stringContaining("not UTF-8") }] });
  });

  it("a directory so named, and such a file appearing after attach: the checkpoint skips it the same way", async (t) => {
    if (!raw) t.skip();
    fs.rmSync(Buffer.concat([Buffer.from(`${ws}/`), NOT_UTF8]));
    const { fp: fp1 } = dbs.open();
    const s1 = await fp1.createSession({ userId: "alice" });
    await s1.attachWorkspace(ws);
    expect(writeRawName(ws, Buffer.from([0x64, 0x69, 0x72, 0xc3]), "x", true)).toBe(true);
    const cp = await s1.checkpoint({ name: "c" });
    expect(cp.skipped).toEqual([{ path: "dir\ufffd", reason: expect.stringContaining("not UTF-8") }]);
    expect(await s1.diffFiles(cp.id)).toMatchObject({ added: [], modified: [], deleted: [] });
  });

  it("excluded, it is left alone: checkpoints, a files rollback, verify and export work", async (t) => {
    if (!raw) t.skip();
    const { fp: fp1 } = dbs.open();
    const s1 = await fp1.createSession({ userId: "alice" });
    expect(await s1.attachWorkspace(ws, { exclude: ["bad-*"] })).toMatchObject({ files: 2 });
    const cp = await s1.checkpoint({ name: "c" });
    fs.writeFileSync(path.join(ws, "real \ufffd.txt"), "changed");
    expect((await s1.diffFiles(cp.id)).modified).toEqual(["real \ufffd.txt"]);
    await s1.checkpoint({ name: "changed" });
    await s1.rollback(cp.id, { scope: "files" });
    expect(fs.readFileSync(path.join(ws, "real \ufffd.txt"), "utf8")).toBe("fffd");
    expect(fs.readFileSync(Buffer.concat([Buffer.from(`${ws}/`), NOT_UTF8]), "utf8")).toBe("bad");
    expect(await fp1.verify()).toMatchObject({ ok: true, problems: [] });
    await fp1.exportSession(s1.id, { userId: "alice" });
  });
});

describe("attachWorkspace takes its directory path exactly as given", () => {
  it("a name ending in a space is that directory, not its trimmed twin", async () => {
    const root = makeTempDir("forkpoint-hostile-dir-");
    try {
      fs.mkdirSync(path.join(root, "data"));
      fs.mkdirSync(path.join(root, "data "));
      fs.writeFileSync(path.join(root, "data ", "mine.txt"), "mine");
      const s1 = await tempFp().createSession({ userId: "alice" });
      const ws = await s1.attachWorkspace(path.join(root, "data "));
      expect(ws).toMatchObject({ dir: fs.realpathSync(path.join(root, "data ")), files: 1 });
    } finally {
      removeDir(root);
    }
  });

  it("a path longer than 512 characters (a deep tree) is a path like any other", async () => {
    const root = makeTempDir("forkpoint-hostile-dir-");
    try {
      const deep = path.join(root, ...Array.from({ length: 12 }, (_, i) => `${i}`.padEnd(60, "x")));
      fs.mkdirSync(deep, { recursive: true });
      expect(deep.length).toBeGreaterThan(512);
      const s1 = await tempFp().createSession({ userId: "alice" });
      expect(await s1.attachWorkspace(deep)).toMatchObject({ dir: fs.realpathSync(deep), files: 0 });
    } finally {
      removeDir(root);
    }
  });

  it("an empty path is refused", async () => {
    const s1 = await tempFp().createSession({ userId: "alice" });
    expect(await rejectionOf(() => s1.attachWorkspace(""))).toMatchObject({ code: "VALIDATION_ERROR", field: "dir" });
  });
});

describe("defineTool refuses a name no call could reach (calls take names as the API parses them)", () => {
  const names: [string, string, string][] = [
    ["a lone surrogate", "wr\ud800ite", "MALFORMED_TEXT"],
    ["surrounding spaces", " write ", "VALIDATION_ERROR"],
    ["a trailing newline", "write\n", "VALIDATION_ERROR"],
    ["more than 512 characters", "w".repeat(513), "VALIDATION_ERROR"],
  ];
  for (const [what, name, code] of names) {
    it(what, async () => {
      const e = await rejectionOf(async () => defineTool({ name, run: () => 1 }));
      expect(e).toBeInstanceOf(ValidationError);
      expect(e).toMatchObject({ code, field: "name" });
      expect(isWellFormed(e.message)).toBe(true);
      // A plain object given to openForkpoint gets the same check.
      expect(await rejectionOf(async () => openForkpoint({ path: ":memory:", tools: [{ name, run: () => 1 }] }))).toMatchObject({
        code,
        field: "name",
      });
    });
  }

  it("a name of 512 astral characters, the longest a call takes, is defined and invoked", async () => {
    const name = "😀".repeat(512);
    const s1 = await tempFp({ tools: [defineTool({ name, run: () => "ran" })] }).createSession({ userId: "alice" });
    expect(await s1.invoke(name)).toBe("ran");
  });
});

describe("checkpointTools' outputs are well-formed, so an agent loop can record them", () => {
  it("an undo's error with a lone surrogate comes out with U+FFFD", async () => {
    const broken = defineTool({
      name: "broken",
      run: () => 1,
      undo: () => {
        throw new Error("undo broke \ud800");
      },
    });
    const s1 = await tempFp({ tools: [broken] }).createSession({ userId: "alice" });
    const cp = await s1.checkpoint({ name: "c" });
    await s1.invoke("broken");
    const tools = Object.fromEntries(checkpointTools(s1).map((t) => [t.name, t]));
    const failed = await tools.rollback!.handler({ checkpointId: cp.id });
    expect(failed).toMatchObject({ ok: false, error: { code: "UNDO_FAILED" } });
    expect(JSON.stringify(failed)).toContain("undo broke \ufffd");
    // What a loop does with a tool's output: record it on the session.
    await s1.recordToolCall({ tool: "rollback", args: { checkpointId: cp.id }, result: failed });
  });
});
