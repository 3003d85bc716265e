// What a call stores is its input as it was when the call was made: a caller changing the objects it passed right
// after calling (without awaiting) changes nothing; and calls made without awaiting commit in the order made.
import { describe, expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

describe("inputs are taken as the call is made", () => {
  it("append, setState, turn, invoke, recordToolCall, edit, createSession, handoff: a change right after the call is not stored", async () => {
    const ran: unknown[] = [];
    const echo = defineTool({
      name: "echo",
      run: async (args: { x: number }) => (ran.push(structuredClone(args)), args),
      undo: async () => {},
    });
    const { fp } = dbs.open({ tools: [echo] });
    const s = await fp.createSession({ userId: "u", title: "t" });

    const message = { role: "user", content: "original" };
    const appended = s.append(message);
    message.content = "changed";
    expect((await appended)[0]!.content).toBe("original");

    const state = { n: 1 };
    const set = s.setState(state);
    state.n = 2;
    await set;
    expect(await s.getState()).toEqual({ n: 1 });

    const asked = { role: "user", content: "q" };
    const options = { name: "before" };
    const turned = s.turn([asked], options);
    asked.content = "changed";
    options.name = "changed";
    const turn = await turned;
    expect([turn.messages[0]!.content, turn.checkpoint.name]).toEqual(["q", "before"]);

    const args = { x: 1 };
    const invoked = s.invoke("echo", args);
    args.x = 2;
    await invoked;
    expect(ran).toEqual([{ x: 1 }]);

    const call = { tool: "echo", args: { x: 3 }, result: "ok" as unknown };
    const recorded = s.recordToolCall(call);
    call.args = { x: 4 };
    call.result = "changed";
    await recorded;
    expect((await s.toolTrack()).map((t) => [t.args, t.result])).toEqual([
      [{ x: 1 }, { x: 1 }],
      [{ x: 3 }, "ok"],
    ]);

    const next = { role: "user", content: "edited" };
    const edited = s.edit((await s.history())[0]!.id, next);
    next.content = "changed";
    expect((await edited).message.content).toBe("edited");

    const target = { userId: "bob", title: "handed" };
    const handed = s.handoff(turn.checkpoint.id, target);
    target.title = "changed";
    expect((await (await handed).info()).title).toBe("handed");

    const created = { userId: "u", title: "second" };
    const creating = fp.createSession(created);
    created.title = "changed";
    expect((await (await creating).info()).title).toBe("second");
    expect(await fp.verify()).toMatchObject({ ok: true });
  });

  it("calls made one after another without awaiting commit in the order they were made, tool calls too", async () => {
    const echo = defineTool({ name: "echo", run: async (args: { n: number }) => args, undo: async () => {} });
    const { fp } = dbs.open({ tools: [echo] });
    const s = await fp.createSession({ userId: "u" });
    const calls = [
      s.recordToolCall({ tool: "echo", args: { n: 1 }, result: null }),
      s.append({ role: "user", content: "two" }),
      s.invoke("echo", { n: 3 }),
      s.checkpoint({ name: "four" }),
      s.append({ role: "user", content: "five" }),
    ];
    await Promise.all(calls);
    const track = await s.toolTrack();
    const history = await s.history();
    const [cp] = (await s.listCheckpoints({ name: "four" })).items;
    expect([track[0]!.position, history[0]!.position, track[1]!.position, cp!.position, history[1]!.position]).toEqual([1, 2, 3, 3, 4]);
  });

  it("calls made right after openForkpoint (nothing to recover) take their inputs as made too", async () => {
    const { path } = dbs.open();
    const fp = dbs.open({ path }).fp;
    const input = { userId: "u", title: "as made" };
    const creating = fp.createSession(input);
    input.title = "changed";
    expect((await (await creating).info()).title).toBe("as made");
  });

  it("a call made from inside a setState updater runs after its transaction, as its own", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    let inner: Promise<unknown> = Promise.resolve();
    const state = await s.setState((previous) => {
      inner = s.append({ role: "user", content: "from the updater" });
      return { ...(previous as object), n: 1 };
    });
    expect(state).toEqual({ n: 1 });
    await inner;
    // The updater throws: its own change is refused, the call it made is not.
    const refused = await s
      .setState(() => {
        inner = s.append({ role: "user", content: "still stored" });
        throw new Error("no");
      })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Error);
    await inner;
    expect((await s.history()).map((m) => m.content)).toEqual(["from the updater", "still stored"]);
    expect(await s.getState()).toEqual({ n: 1 });
    expect(await fp.verify()).toMatchObject({ ok: true });
  });
});
