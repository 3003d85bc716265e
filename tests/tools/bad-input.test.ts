// Bad input to the tool-track and operator calls: a typed error naming what was wrong, and the database unchanged.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ConflictError,
  NotFoundError,
  PayloadTooLargeError,
  ValidationError,
  defineTool,
  openForkpoint as openForkpointAsGiven,
  type Forkpoint,
  type SessionHandle,
} from "../../src/index.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { dumpOf, openForkpoint } from "../fixtures/backend.js";

let dir: string;
let file: string;
let fp: Forkpoint;
let s: SessionHandle;
let cpId = "";
const cycle: Record<string, unknown> = {};
cycle.self = cycle;

beforeAll(async () => {
  dir = makeTempDir("forkpoint-tool-bad-input-");
  file = join(dir, "db.sqlite");
  const echo = defineTool({ name: "echo", run: async (args: { [key: string]: string }) => args, undo: async () => {} });
  fp = openForkpoint({ path: file, tools: [echo], limits: { maxPayloadBytes: 1000 } });
  s = await fp.createSession({ userId: "u" });
  await s.append({ role: "user", content: "hi" });
  cpId = (await s.checkpoint({ name: "cp" })).id;
  await s.append({ role: "assistant", content: "left on the root" });
  await s.rollback(cpId); // a branch forks from it
});
afterAll(async () => {
  await fp.close();
  removeDir(dir);
});

type Row = [label: string, call: () => Promise<unknown>, errorClass: new (...args: never[]) => Error, code: string, names: string];
const rows: Row[] = [
  ["invoke: unknown tool", () => s.invoke("nope", {}), NotFoundError, "NOT_FOUND", "nope"],
  ["invoke: empty tool name", () => s.invoke("", {}), ValidationError, "VALIDATION_ERROR", "tool"],
  ["invoke: a function in args", () => s.invoke("echo", { f: () => 1 } as never), ValidationError, "VALIDATION_ERROR", "args.f"],
  ["invoke: a cycle in args", () => s.invoke("echo", cycle as never), ValidationError, "VALIDATION_ERROR", "args"],
  ["invoke: NaN in args", () => s.invoke("echo", { n: Number.NaN }), ValidationError, "VALIDATION_ERROR", "args.n"],
  ["invoke: oversized args", () => s.invoke("echo", { t: "x".repeat(2000) }), PayloadTooLargeError, "PAYLOAD_TOO_LARGE", "args"],
  ["recordToolCall: no tool", () => s.recordToolCall({ args: {} } as never), ValidationError, "VALIDATION_ERROR", "tool"],
  [
    "recordToolCall: BigInt result",
    () => s.recordToolCall({ tool: "echo", args: {}, result: { b: 1n } as never }),
    ValidationError,
    "VALIDATION_ERROR",
    "result.b",
  ],
  [
    "recordToolCall: undefined in args array",
    () => s.recordToolCall({ tool: "echo", args: [1, undefined] as never }),
    ValidationError,
    "VALIDATION_ERROR",
    "args[1]",
  ],
  [
    "recordToolCall: unknown option",
    () => s.recordToolCall({ tool: "echo", args: {}, extra: 1 } as never),
    ValidationError,
    "VALIDATION_ERROR",
    "extra",
  ],
  [
    "recordToolCall: error of the wrong type",
    () => s.recordToolCall({ tool: "echo", args: {}, error: 42 } as never),
    ValidationError,
    "VALIDATION_ERROR",
    "error",
  ],
  ["toolTrack: unknown branch", () => s.toolTrack({ branchId: "br_nope" }), NotFoundError, "NOT_FOUND", "br_nope"],
  ["toolTrack: unknown option", () => s.toolTrack({ nope: 1 } as never), ValidationError, "VALIDATION_ERROR", "nope"],
  ["plan: no target", () => s.plan({} as never), ValidationError, "VALIDATION_ERROR", "target"],
  ["plan: unknown checkpoint", () => s.plan({ checkpointId: "cp_nope" }), NotFoundError, "NOT_FOUND", "cp_nope"],
  ["plan: unknown message", () => s.plan({ messageId: "msg_nope" }), NotFoundError, "NOT_FOUND", "msg_nope"],
  ["rollback: bad policy", () => s.rollback(cpId, { onUndoError: "ignore" } as never), ValidationError, "VALIDATION_ERROR", "onUndoError"],
  ["rollback: bad scope", () => s.rollback(cpId, { scope: "world" } as never), ValidationError, "VALIDATION_ERROR", "scope"],
  [
    "rollback: bad unregistered policy",
    () => s.rollback(cpId, { unregistered: "skip" } as never),
    ValidationError,
    "VALIDATION_ERROR",
    "unregistered",
  ],
  [
    "switchBranch: unregistered null",
    () => s.switchBranch("br_nope", { unregistered: null } as never),
    ValidationError,
    "VALIDATION_ERROR",
    "unregistered",
  ],
  [
    "rollback: files scope without a workspace",
    () => s.rollback(cpId, { scope: "both" }),
    ValidationError,
    "VALIDATION_ERROR",
    "workspace",
  ],
  ["deleteCheckpoint: unknown id", () => s.deleteCheckpoint("cp_nope"), NotFoundError, "NOT_FOUND", "cp_nope"],
  [
    "deleteCheckpoint: a checkpoint a branch forks from",
    () => s.deleteCheckpoint(cpId),
    ConflictError,
    "CHECKPOINT_IN_USE",
    "a branch forks from",
  ],
  ["deleteCheckpoint: not a string", () => s.deleteCheckpoint(7 as never), ValidationError, "VALIDATION_ERROR", "checkpointId"],
  ["verify: unknown session", () => fp.verify({ sessionId: "ses_nope" }), NotFoundError, "NOT_FOUND", "ses_nope"],
  ["verify: unknown option", () => fp.verify({ all: true } as never), ValidationError, "VALIDATION_ERROR", "all"],
];

describe("bad input to tool-track and operator calls", () => {
  it.each(rows)("%s", async (_label, call, errorClass, code, names) => {
    const before = await dumpOf(file);
    const error = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(errorClass);
    expect((error as { code: string }).code).toBe(code);
    expect((error as Error).message).toContain(names);
    expect(await dumpOf(file)).toEqual(before);
  });

  it.each([
    ["an unknown option", { nope: 1 }, "nope"],
    ["a durability that does not exist", { path: ":memory:", durability: "fast" }, "durability"],
    ["an auto-checkpoint policy of 0 messages", { path: ":memory:", autoCheckpoint: { everyMessages: 0 } }, "everyMessages"],
    ["tools that are not an array", { path: ":memory:", tools: "write_file" }, "tools"],
  ])("openForkpoint refuses %s", (_label, options, names) => {
    // Its own options, as given (a SQLite option included): refused before any store is opened.
    expect(() => openForkpointAsGiven(options as never)).toThrow(ValidationError);
    expect(() => openForkpointAsGiven(options as never)).toThrow(names);
  });
});
