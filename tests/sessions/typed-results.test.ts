// Typed results: event payloads by name, invoke's result from a typed tool, and the one naming rule of `field`.
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  NotFoundError,
  ValidationError,
  defineTool,
  type Checkpoint,
  type EditResult,
  type Message,
  type MoveResult,
  type PruneReport,
  type ToolInvocation,
  type VersionedMessage,
} from "../../src/index.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const writeFile = defineTool({
  name: "write_file",
  run: (args: { path: string; text: string }) => ({ written: args.path, bytes: args.text.length }),
  undo: () => undefined,
});

describe("typed results", () => {
  it("fp.on gives each event its own payload type", async () => {
    const { fp } = dbs.open({ tools: [writeFile] });
    const seen: string[] = [];
    fp.on("checkpoint", (cp) => {
      expectTypeOf(cp).toEqualTypeOf<Checkpoint>();
      seen.push(`checkpoint ${cp.name}`);
    });
    fp.on("rollback", (r) => void expectTypeOf(r).toEqualTypeOf<MoveResult>());
    fp.on("switch", (r) => void expectTypeOf(r).toEqualTypeOf<MoveResult>());
    fp.on("edit", (r) => {
      expectTypeOf(r.message).toEqualTypeOf<Message>();
      seen.push(`edit ${String(r.message.content)}`);
    });
    fp.on("tool", (t) => {
      expectTypeOf(t).toEqualTypeOf<ToolInvocation>();
      seen.push(`tool ${t.tool}`);
    });
    fp.on("undo", (t) => void expectTypeOf(t.applied).toEqualTypeOf<false>());
    fp.on("prune", (r) => void expectTypeOf(r).toEqualTypeOf<PruneReport>());
    // @ts-expect-error: no such event
    expect(() => fp.on("chekpoint", () => undefined)).toThrow(ValidationError);

    const s = await fp.createSession({ userId: "alice" });
    const [m] = await s.append({ role: "user", content: "hi" });
    await s.invoke(writeFile, { path: "a.txt", text: "hey" });
    await s.edit(m!.id, { content: "hello" }, { checkpoint: { name: "v2" } });
    expect(seen).toEqual(["tool write_file", "edit hello", "checkpoint v2"]);
  });

  it("invoke(definition, args) is typed by the tool; the string form still works", async () => {
    const { fp } = dbs.open({ tools: [writeFile] });
    const s = await fp.createSession({ userId: "alice" });
    const typed = await s.invoke(writeFile, { path: "a.txt", text: "hi" });
    expectTypeOf(typed).toEqualTypeOf<{ written: string; bytes: number }>();
    expect(typed).toEqual({ written: "a.txt", bytes: 2 });
    // @ts-expect-error: args of the wrong shape do not compile (never called)
    const wrong = () => s.invoke(writeFile, { path: 1 });
    expect(typeof wrong).toBe("function");
    expect(await s.invoke("write_file", { path: "b.txt", text: "" })).toEqual({ written: "b.txt", bytes: 0 });

    const lookalike = defineTool({ name: "write_file", run: () => ({ written: "", bytes: 0 }) });
    await expect(s.invoke(lookalike, { path: "c", text: "" } as never)).rejects.toMatchObject({ field: "tool" });
    const unregistered = defineTool({ name: "other", run: () => null });
    await expect(s.invoke(unregistered, {})).rejects.toBeInstanceOf(NotFoundError);
    expect((await s.toolTrack()).map((t) => t.args)).toEqual([
      { path: "a.txt", text: "hi" },
      { path: "b.txt", text: "" },
    ]);
  });

  it("history, edit and regenerate results are typed", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append([
      { role: "user", content: "q" },
      { role: "assistant", content: "a" },
    ]);
    const page = await s.history({ limit: 10, withVersions: true });
    expectTypeOf(page).toEqualTypeOf<VersionedMessage[]>();
    expectTypeOf(await s.history()).toEqualTypeOf<Message[]>();
    const r = await s.regenerate(page[1]!.id, { content: "a2" }, { checkpoint: { name: "r" } });
    expectTypeOf(r).toEqualTypeOf<EditResult>();
    expect(r.checkpoint?.name).toBe("r");
  });
});

describe("ValidationError field: the path as the caller wrote it", () => {
  it("names option keys bare, nested options by their path, and value arguments by their parameter", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const [m] = await s.append({ role: "user", content: "q" });
    const cases: [string, () => Promise<unknown>, string][] = [
      ["history limit", () => s.history({ limit: 0 }), "limit"],
      ["history unknown key", () => s.history({ nope: 1 } as never), "options"],
      ["edit checkpoint name", () => s.edit(m!.id, { content: "x" }, { checkpoint: { name: "" } }), "checkpoint.name"],
      ["checkpoint name", () => s.checkpoint({ name: "" }), "name"],
      ["turn checkpoint metadata", () => s.turn([], { metadata: { n: Number.NaN } }), "metadata.n"],
      ["createSession userId", () => fp.createSession({ userId: "" }), "userId"],
      ["createSession metadata", () => fp.createSession({ userId: "a", metadata: { n: Number.NaN } }), "metadata.n"],
      ["listSessions limit", () => fp.listSessions({ userId: "alice", limit: 0 }), "limit"],
      ["listCheckpoints auto", () => fp.listCheckpoints({ userId: "alice", auto: 1 as never }), "auto"],
      ["timeline limit", () => s.timeline({ limit: 0 }), "limit"],
      ["update title", () => s.update({ title: "" }), "title"],
      ["nameBranch name", () => s.nameBranch(m!.branchId, ""), "name"],
      ["recordToolCall args", () => s.recordToolCall({ tool: "t", args: { n: Number.NaN } }), "args.n"],
      ["getSession scope", () => fp.getSession(s.id, { userId: "" }), "userId"],
      ["message id", () => s.message(""), "messageId"],
      ["append content", () => s.append({ role: "user", content: { n: Number.NaN } }), "message.content.n"],
      [
        "append batch role",
        () =>
          s.append([
            { role: "user", content: 1 },
            { role: "", content: 2 },
          ]),
        "messages[1].role",
      ],
      ["setState", () => s.setState({ n: Number.NaN }), "state.n"],
      ["setRetention keepLast", () => s.setRetention({ keepLast: -1 }), "keepLast"],
      ["setRetention unknown key", () => s.setRetention({ nope: 1 } as never), "policy"],
      ["atomic name", () => s.atomic(async () => 1, { name: "" }), "name"],
      ["withCheckpoints every", async () => s.withCheckpoints(async () => 1, { every: 0 }), "every"],
      ["track fields", async () => s.track({ a: 1 }, { fields: [] }), "fields"],
      ["track missing options", async () => s.track({ a: 1 }, undefined as never), "options"],
      ["clone userId", () => fp.clone(s.id, { userId: "" }), "userId"],
      ["clone missing scope", () => fp.clone(s.id, undefined as never), "scope"],
    ];
    for (const [what, call, field] of cases) {
      const e = await call().catch((x: unknown) => x);
      expect(e, what).toBeInstanceOf(ValidationError);
      expect((e as ValidationError).field, what).toBe(field);
    }
  });
});
