// Bad input gets a typed error naming what was wrong, and leaves the database exactly as it was (DESIGN §6.5).
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ForkpointError,
  NotFoundError,
  PayloadTooLargeError,
  ValidationError,
  type Forkpoint,
  type JsonValue,
  type SessionHandle,
} from "../../src/index.js";
import { makeTempDir, rejectionOf, removeDir, unknownId } from "../helpers.js";
import { dumpOf, openForkpoint } from "../fixtures/backend.js";

const MAX_PAYLOAD = 1000;

let dir: string;
let file: string;
let fp: Forkpoint;
let s: SessionHandle;
let other: SessionHandle;
let ids: { checkpoint: string; message: string; otherCheckpoint: string; otherMessage: string; otherBranch: string };

beforeAll(async () => {
  dir = makeTempDir();
  file = path.join(dir, "bad-input.db");
  fp = openForkpoint({ path: file, limits: { maxPayloadBytes: MAX_PAYLOAD } });
  s = await fp.createSession({ userId: "alice", title: "main" });
  const [m] = await s.append([
    { role: "user", content: "hello" },
    { role: "assistant", content: "hi" },
  ]);
  await s.setState({ step: 1 });
  const cp = await s.checkpoint({ name: "cp" });
  other = await fp.createSession({ userId: "alice", title: "other" });
  const [om] = await other.append({ role: "user", content: "elsewhere" });
  const ocp = await other.checkpoint();
  ids = {
    checkpoint: cp.id,
    message: m!.id,
    otherCheckpoint: ocp.id,
    otherMessage: om!.id,
    otherBranch: (await other.info()).currentBranchId,
  };
});

afterAll(async () => {
  await fp.close();
  removeDir(dir);
});

const cyclic = (): JsonValue => {
  const node: Record<string, unknown> = { name: "loop" };
  node.self = node;
  return node as JsonValue;
};
const bad = <T>(value: unknown) => value as T;
const big = "x".repeat(MAX_PAYLOAD + 1);
/** An object whose `key` is a getter that throws: the caller's own code failing while forkpoint reads it. */
const throwing = (fields: Record<string, unknown>, key: string) =>
  Object.defineProperty({ ...fields }, key, {
    enumerable: true,
    get() {
      throw new TypeError(`reading ${key} failed`);
    },
  });
class Point {
  constructor(
    public x = 1,
    public y = 2,
  ) {}
}

type Row = {
  /** What is wrong. */
  what: string;
  call: () => Promise<unknown>;
  error: new (...args: any[]) => ForkpointError;
  code: string;
  /** Must appear in the message: the offending field (or the unknown id). */
  names: string | (() => string);
};

const V = ValidationError;
const rows: Row[] = [
  // users and sessions
  { what: "createSession without userId", call: () => fp.createSession(bad({})), error: V, code: "VALIDATION_ERROR", names: "userId" },
  {
    what: "createSession with an empty userId",
    call: () => fp.createSession({ userId: "" }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "userId",
  },
  {
    what: "createSession with a blank userId",
    call: () => fp.createSession({ userId: "   " }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "userId",
  },
  {
    what: "createSession with a number as userId",
    call: () => fp.createSession(bad({ userId: 42 })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "userId",
  },
  {
    what: "createSession with an unknown option",
    call: () => fp.createSession(bad({ userId: "alice", colour: "red" })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "colour",
  },
  {
    what: "createSession with a function in metadata",
    call: () => fp.createSession(bad({ userId: "alice", metadata: { f: () => 1 } })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "metadata",
  },
  {
    what: "createSession with oversized metadata",
    call: () => fp.createSession({ userId: "alice", metadata: { big } }),
    error: PayloadTooLargeError,
    code: "PAYLOAD_TOO_LARGE",
    names: "metadata",
  },
  {
    what: "getSession with an unknown id",
    call: () => fp.getSession(unknownId("ses"), { userId: "alice" }),
    error: NotFoundError,
    code: "NOT_FOUND",
    names: unknownId("ses"),
  },
  {
    what: "getSession with an empty userId",
    call: () => fp.getSession(s.id, { userId: "" }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "userId",
  },
  {
    what: "getSession without a scope",
    call: () => fp.getSession(s.id, bad(undefined)),
    error: V,
    code: "VALIDATION_ERROR",
    names: "scope",
  },
  {
    what: "getSession with an empty id",
    call: () => fp.getSession("", { userId: "alice" }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "sessionId",
  },
  // append
  { what: "append without role", call: () => s.append(bad({ content: "x" })), error: V, code: "VALIDATION_ERROR", names: "role" },
  {
    what: "append with an empty role",
    call: () => s.append({ role: "", content: "x" }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "role",
  },
  {
    what: "append with a number as role",
    call: () => s.append(bad({ role: 7, content: "x" })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "role",
  },
  { what: "append without content", call: () => s.append(bad({ role: "user" })), error: V, code: "VALIDATION_ERROR", names: "content" },
  {
    what: "append with a function as content",
    call: () => s.append(bad({ role: "user", content: () => "x" })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "content",
  },
  {
    what: "append with a symbol inside content",
    call: () => s.append(bad({ role: "user", content: { s: Symbol("s") } })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "content.s",
  },
  {
    what: "append with undefined inside an array",
    call: () => s.append(bad({ role: "user", content: [1, undefined, 3] })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "content[1]",
  },
  {
    what: "append with a hole in an array",
    call: () => s.append(bad({ role: "user", content: [1, , 3] })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "content[1]",
  },
  {
    what: "append with NaN",
    call: () => s.append({ role: "user", content: { n: NaN } }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "content.n",
  },
  {
    what: "append with Infinity",
    call: () => s.append({ role: "user", content: [Infinity] }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "content[0]",
  },
  {
    what: "append with -Infinity",
    call: () => s.append({ role: "user", content: -Infinity }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "content",
  },
  {
    what: "append with a BigInt",
    call: () => s.append(bad({ role: "user", content: { n: 10n } })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "content.n",
  },
  {
    what: "append with a cycle",
    call: () => s.append({ role: "user", content: cyclic() }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "content",
  },
  {
    what: "append with a Map",
    call: () => s.append(bad({ role: "user", content: new Map([["a", 1]]) })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "content",
  },
  {
    what: "append with a Date",
    call: () => s.append(bad({ role: "user", content: { at: new Date(0) } })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "content.at",
  },
  {
    what: "append with a class instance",
    call: () => s.append(bad({ role: "user", content: { p: new Point() } })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "content.p",
  },
  {
    what: "append with a symbol-keyed object",
    call: () => s.append(bad({ role: "user", content: { [Symbol("k")]: 1 } })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "content",
  },
  {
    what: "append with oversized content",
    call: () => s.append({ role: "user", content: big }),
    error: PayloadTooLargeError,
    code: "PAYLOAD_TOO_LARGE",
    names: "content",
  },
  {
    what: "append with oversized metadata",
    call: () => s.append({ role: "user", content: "x", metadata: { big } }),
    error: PayloadTooLargeError,
    code: "PAYLOAD_TOO_LARGE",
    names: "metadata",
  },
  {
    what: "append with a string as metadata",
    call: () => s.append(bad({ role: "user", content: "x", metadata: "m" })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "metadata",
  },
  {
    what: "append with an unknown key",
    call: () => s.append(bad({ role: "user", content: "x", colour: "red" })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "colour",
  },
  {
    what: "append of a batch whose third message is bad (the first two are not stored either)",
    call: () =>
      s.append(
        bad([
          { role: "user", content: "ok 1" },
          { role: "assistant", content: "ok 2" },
          { role: "", content: "x" },
        ]),
      ),
    error: V,
    code: "VALIDATION_ERROR",
    names: "messages[2].role",
  },
  {
    what: "append of a batch whose second message holds a cycle",
    call: () =>
      s.append([
        { role: "user", content: "ok" },
        { role: "user", content: cyclic() },
      ]),
    error: V,
    code: "VALIDATION_ERROR",
    names: "messages[1].content",
  },
  // state
  { what: "setState with undefined", call: () => s.setState(bad(undefined)), error: V, code: "VALIDATION_ERROR", names: "state" },
  { what: "setState with NaN inside", call: () => s.setState({ n: NaN }), error: V, code: "VALIDATION_ERROR", names: "state.n" },
  { what: "setState with a cycle", call: () => s.setState(cyclic()), error: V, code: "VALIDATION_ERROR", names: "state" },
  {
    what: "setState with oversized state",
    call: () => s.setState({ big }),
    error: PayloadTooLargeError,
    code: "PAYLOAD_TOO_LARGE",
    names: "state",
  },
  {
    what: "setState with an updater returning a BigInt",
    call: () => s.setState(() => bad({ n: 1n })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "state.n",
  },
  {
    what: "setState with an updater returning a class instance",
    call: () => s.setState(() => bad(new Point())),
    error: V,
    code: "VALIDATION_ERROR",
    names: "state",
  },
  {
    what: "setState with an updater returning oversized state",
    call: () => s.setState(() => ({ big })),
    error: PayloadTooLargeError,
    code: "PAYLOAD_TOO_LARGE",
    names: "state",
  },
  // checkpoints
  { what: "checkpoint with an empty name", call: () => s.checkpoint({ name: "" }), error: V, code: "VALIDATION_ERROR", names: "name" },
  {
    what: "checkpoint with a number as name",
    call: () => s.checkpoint(bad({ name: 5 })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "name",
  },
  {
    what: "checkpoint with a symbol in metadata",
    call: () => s.checkpoint(bad({ metadata: { s: Symbol("x") } })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "metadata",
  },
  {
    what: "checkpoint with oversized metadata",
    call: () => s.checkpoint({ metadata: { big } }),
    error: PayloadTooLargeError,
    code: "PAYLOAD_TOO_LARGE",
    names: "metadata",
  },
  {
    what: "checkpoint with an unknown option",
    call: () => s.checkpoint(bad({ nme: "typo" })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "nme",
  },
  {
    what: "checkpoint with an empty expiresIn",
    call: () => s.checkpoint({ expiresIn: "" }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "expiresIn",
  },
  {
    what: "checkpoint with NaN as expiresIn",
    call: () => s.checkpoint({ expiresIn: Number.NaN }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "positive duration",
  },
  {
    what: "checkpoint with an expiry past what a Date holds",
    call: () => s.checkpoint({ expiresIn: 1e20 }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "1,000 years",
  },
  {
    what: "recordToolCall with both a result and an error",
    call: () => s.recordToolCall({ tool: "t", args: {}, result: 1, error: "boom" }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "error",
  },
  { what: "plan with no target", call: () => s.plan(bad({})), error: V, code: "VALIDATION_ERROR", names: "{ checkpointId }" },
  {
    what: "append without content says it is required",
    call: () => s.append(bad({ role: "user" })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "message.content: is required",
  },
  {
    what: "on() with an unknown event name",
    call: async () => fp.on(bad<"checkpoint">("checkpointed"), () => {}),
    error: V,
    code: "VALIDATION_ERROR",
    names: '"checkpoint"',
  },
  {
    what: "on() with a listener that is not a function",
    call: async () => fp.on("checkpoint", bad("not a function")),
    error: V,
    code: "VALIDATION_ERROR",
    names: "listener",
  },
  {
    what: "restore of an unknown checkpoint",
    call: () => s.restore(unknownId("cp")),
    error: NotFoundError,
    code: "NOT_FOUND",
    names: unknownId("cp"),
  },
  {
    what: "restore of another session's checkpoint",
    call: () => s.restore(ids.otherCheckpoint),
    error: NotFoundError,
    code: "NOT_FOUND",
    names: () => ids.otherCheckpoint,
  },
  { what: "restore with a number as id", call: () => s.restore(bad(123)), error: V, code: "VALIDATION_ERROR", names: "checkpointId" },
  {
    what: "rollback to an unknown checkpoint",
    call: () => s.rollback(unknownId("cp")),
    error: NotFoundError,
    code: "NOT_FOUND",
    names: unknownId("cp"),
  },
  {
    what: "rollback to another session's checkpoint",
    call: () => s.rollback(ids.otherCheckpoint),
    error: NotFoundError,
    code: "NOT_FOUND",
    names: () => ids.otherCheckpoint,
  },
  { what: "rollback with an empty id", call: () => s.rollback(""), error: V, code: "VALIDATION_ERROR", names: "checkpointId" },
  {
    what: "rollback with an unknown option",
    call: () => s.rollback(ids.checkpoint, bad({ bogus: true })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "bogus",
  },
  {
    what: "rollback with a bad onUndoError",
    call: () => s.rollback(ids.checkpoint, bad({ onUndoError: "explode" })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "onUndoError",
  },
  {
    what: "diff with another session's checkpoint",
    call: () => s.diff(ids.checkpoint, ids.otherCheckpoint),
    error: NotFoundError,
    code: "NOT_FOUND",
    names: () => ids.otherCheckpoint,
  },
  // edit, versions, branches
  {
    what: "edit of an unknown message",
    call: () => s.edit(unknownId("msg"), { role: "user", content: "x" }),
    error: NotFoundError,
    code: "NOT_FOUND",
    names: unknownId("msg"),
  },
  {
    what: "edit of another session's message",
    call: () => s.edit(ids.otherMessage, { role: "user", content: "x" }),
    error: NotFoundError,
    code: "NOT_FOUND",
    names: () => ids.otherMessage,
  },
  {
    what: "edit with an empty role",
    call: () => s.edit(ids.message, { role: "", content: "x" }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "role",
  },
  {
    what: "edit with a function as content",
    call: () => s.edit(ids.message, bad({ role: "user", content: () => 1 })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "content",
  },
  {
    what: "edit with oversized content",
    call: () => s.edit(ids.message, { role: "user", content: big }),
    error: PayloadTooLargeError,
    code: "PAYLOAD_TOO_LARGE",
    names: "content",
  },
  {
    what: "versions of an unknown message",
    call: () => s.versions(unknownId("msg")),
    error: NotFoundError,
    code: "NOT_FOUND",
    names: unknownId("msg"),
  },
  {
    what: "switchBranch to an unknown branch",
    call: () => s.switchBranch(unknownId("br")),
    error: NotFoundError,
    code: "NOT_FOUND",
    names: unknownId("br"),
  },
  {
    what: "switchBranch to another session's branch",
    call: () => s.switchBranch(ids.otherBranch),
    error: NotFoundError,
    code: "NOT_FOUND",
    names: () => ids.otherBranch,
  },
  {
    what: "history of an unknown branch",
    call: () => s.history({ branchId: unknownId("br") }),
    error: NotFoundError,
    code: "NOT_FOUND",
    names: unknownId("br"),
  },
  {
    what: "history with a number as branchId",
    call: () => s.history(bad({ branchId: 5 })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "branchId",
  },
  {
    what: "history with an unknown option",
    call: () => s.history(bad({ branch: "x" })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "branch",
  },
  // listings
  { what: "listSessions without userId", call: () => fp.listSessions(bad({})), error: V, code: "VALIDATION_ERROR", names: "userId" },
  {
    what: "listSessions with a string as limit",
    call: () => fp.listSessions(bad({ userId: "alice", limit: "10" })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "limit",
  },
  {
    what: "listSessions with limit 0",
    call: () => fp.listSessions({ userId: "alice", limit: 0 }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "limit",
  },
  {
    what: "listSessions with a fractional limit",
    call: () => fp.listSessions({ userId: "alice", limit: 2.5 }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "limit",
  },
  {
    what: "listSessions with a bad cursor",
    call: () => fp.listSessions({ userId: "alice", cursor: "not-a-cursor" }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "cursor",
  },
  {
    what: "listSessions with a forged cursor",
    call: () => fp.listSessions({ userId: "alice", cursor: Buffer.from('["x"]').toString("base64url") }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "cursor",
  },
  {
    what: "listSessions with an unknown option",
    call: () => fp.listSessions(bad({ userId: "alice", offset: 5 })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "offset",
  },
  {
    what: "listCheckpoints with an empty userId",
    call: () => fp.listCheckpoints({ userId: "" }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "userId",
  },
  {
    what: "listCheckpoints with a bad cursor",
    call: () => fp.listCheckpoints({ userId: "alice", cursor: "%%%" }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "cursor",
  },
  {
    what: "listCheckpoints with an invalid since",
    call: () => fp.listCheckpoints({ userId: "alice", since: "not a date" }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "since",
  },
  {
    what: "listCheckpoints with an invalid Date as since",
    call: () => fp.listCheckpoints({ userId: "alice", since: new Date(NaN) }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "since: must be a valid date",
  },
  {
    what: "listCheckpoints with a string as auto",
    call: () => fp.listCheckpoints(bad({ userId: "alice", auto: "yes" })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "auto",
  },
  {
    what: "listCheckpoints with an unknown option",
    call: () => fp.listCheckpoints(bad({ userId: "alice", session: "x" })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "session",
  },
  {
    what: "timeline with a string as limit",
    call: () => s.timeline(bad({ limit: "5" })),
    error: V,
    code: "VALIDATION_ERROR",
    names: "limit",
  },
  {
    what: "timeline with a bad cursor",
    call: () => s.timeline({ cursor: "garbage" }),
    error: V,
    code: "VALIDATION_ERROR",
    names: "cursor",
  },
  // values whose getters (or proxy traps) throw: a ValidationError naming where, the caller's error as its cause
  ...(
    [
      ["append with a message whose role getter throws", () => s.append(bad(throwing({ content: "x" }, "role"))), "message"],
      ["append with content whose getter throws", () => s.append({ role: "user", content: throwing({}, "text") }), "message.content.text"],
      [
        "append with metadata whose getter throws",
        () => s.append({ role: "user", content: "x", metadata: throwing({}, "m") }),
        "message.metadata.m",
      ],
      [
        "append of a list, the second message's getter throwing",
        () => s.append([{ role: "user", content: "x" }, bad(throwing({ role: "user" }, "content"))]),
        "messages[1]",
      ],
      [
        "append with options whose requestId getter throws",
        () => s.append({ role: "user", content: "x" }, bad(throwing({}, "requestId"))),
        "requestId",
      ],
      [
        "append with a message proxy whose ownKeys trap throws",
        () =>
          s.append(
            bad(
              new Proxy(
                { role: "user", content: "x" },
                {
                  ownKeys: () => {
                    throw new TypeError("no keys");
                  },
                },
              ),
            ),
          ),
        "message",
      ],
      ["undo with options whose requestId getter throws", () => s.undo(bad(throwing({}, "requestId"))), "requestId"],
      [
        "edit with options whose requestId getter throws",
        () => s.edit(ids.message, { content: "x" }, bad(throwing({}, "requestId"))),
        "requestId",
      ],
      ["turn with a message whose getter throws", () => s.turn([bad(throwing({ role: "user" }, "content"))], { name: "t" }), "messages[0]"],
      ["setState with a value whose getter throws", () => s.setState(throwing({ a: 1 }, "b")), "state.b"],
      ["setState with a value whose getter throws only when read again", () => s.setState(onceReadable()), "state"],
      ["checkpoint with metadata whose getter throws", () => s.checkpoint({ name: "n", metadata: throwing({}, "m") }), "metadata.m"],
      ["update with a title getter that throws", () => s.update(bad(throwing({}, "title"))), "fields"],
      ["createSession with a title getter that throws", () => fp.createSession(bad(throwing({ userId: "alice" }, "title"))), "options"],
      ["recordToolCall with args whose getter throws", () => s.recordToolCall({ tool: "t", args: throwing({}, "a") }), "args.a"],
      ["listSessions with a userId getter that throws", () => fp.listSessions(bad(throwing({}, "userId"))), "options"],
      ["edit with a message whose role getter throws", () => s.edit(ids.message, bad(throwing({ content: "x" }, "role"))), "message"],
      ["plan with a target whose scope getter throws", () => s.plan(bad(throwing({ checkpointId: ids.checkpoint }, "scope"))), "target"],
      ["listCheckpoints of a session with a limit getter that throws", () => s.listCheckpoints(bad(throwing({}, "limit"))), "filter"],
      ["append of a revoked proxy (its traps throw)", () => s.append(bad(revoked())), "messages"],
      ["edit with a revoked proxy as the message (its traps throw)", () => s.edit(ids.message, bad(revoked())), "message"],
      ["invoke with revoked options (their traps throw)", () => s.invoke("t", {}, bad(revoked())), "options"],
      ["setState with an updater returning a revoked proxy (its traps throw)", () => s.setState(() => bad(revoked())), "state"],
      ["undo with options whose scope getter throws", () => s.undo(bad(throwing({}, "scope"))), "options"],
      ["redo with options whose scope getter throws", () => s.redo(bad(throwing({}, "scope"))), "options"],
      ["listSessions with a revoked proxy (its traps throw)", () => fp.listSessions(bad(revoked())), "options"],
    ] as const
  ).map(([what, call, names]): Row => ({ what, call, error: V, code: "VALIDATION_ERROR", names })),
];

/** A proxy whose every trap throws a TypeError (revoked). */
function revoked(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

/** A state whose getter answers the first read (the check) and throws on the next (the serialization). */
function onceReadable(): JsonValue {
  let reads = 0;
  return Object.defineProperty({}, "late", {
    enumerable: true,
    get() {
      if (++reads > 1) throw new TypeError("read twice");
      return 1;
    },
  }) as JsonValue;
}

describe("bad input: a typed error naming the field, and the database unchanged", () => {
  it("the table covers at least 30 cases", () => {
    expect(rows.length).toBeGreaterThanOrEqual(30);
  });

  for (const row of rows) {
    it(row.what, async () => {
      const before = await dumpOf(file);
      const e = await rejectionOf(row.call);
      expect(e).toBeInstanceOf(ForkpointError);
      expect(e).toBeInstanceOf(row.error);
      expect(e.code).toBe(row.code);
      expect(e.message).toContain(typeof row.names === "function" ? row.names() : row.names);
      if (row.what.includes("throw")) expect((e as Error).cause).toBeInstanceOf(TypeError);
      expect(await dumpOf(file)).toEqual(before);
    });
  }

  it("the valid calls of the same shapes succeed (the setup is sound)", async () => {
    expect((await s.history()).map((m) => m.content)).toEqual(["hello", "hi"]);
    expect(await s.getState()).toEqual({ step: 1 });
    expect((await fp.listCheckpoints({ userId: "alice", sessionId: s.id })).items.map((c) => c.id)).toEqual([ids.checkpoint]);
    const ok = await s.append({ role: "user", content: "x".repeat(MAX_PAYLOAD - 2) }); // JSON text is exactly the limit
    expect(ok).toHaveLength(1);
  });
});
