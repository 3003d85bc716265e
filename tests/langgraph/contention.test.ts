// ForkpointSaver when something else acts while a put is under way: another connection (another process, as far as
// SQLite knows) moving the thread while the put works out where it lands (the put's fork and rows are one transaction);
// a node pushing to or rewriting the messages while the put awaits its write (the next put stores what it did not).
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { describe, expect, it } from "vitest";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defineTool, type Forkpoint } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { makeTempDir, removeDir, tempDatabases } from "../helpers.js";
import { sqlOn } from "../fixtures/backend.js";

const dbs = tempDatabases();

const config = (parent?: string) => ({ configurable: { thread_id: "t", checkpoint_ns: "", ...(parent ? { checkpoint_id: parent } : {}) } });
const put = (saver: ForkpointSaver, parent: string | undefined, id: string, messages: unknown[], step: number) =>
  saver.put(
    config(parent),
    { v: 4, id, ts: new Date().toISOString(), channel_values: { messages }, channel_versions: { messages: step }, versions_seen: {} },
    { source: "loop", step, parents: {} },
    { messages: step },
  );
const [one, two, theirs] = ["one", "two", "theirs"].map((content) => ({ role: "user", content }));

/** A serializer that, the first time it writes a list of messages, lets `meanwhile` run first (another writer's put). */
class InterleavingSerializer extends JsonPlusSerializer {
  constructor(private meanwhile: (() => Promise<unknown>) | null) {
    super();
  }

  override async dumpsTyped(value: unknown): Promise<[string, Uint8Array]> {
    if (Array.isArray(value) && this.meanwhile) {
      const run = this.meanwhile;
      this.meanwhile = null;
      await run();
    }
    return super.dumpsTyped(value);
  }
}

/** Checkpoint `id`'s messages, read by a new saver (nothing kept from the writes). */
const read = async (fp: Forkpoint, id: string) => (await new ForkpointSaver(fp).getTuple(config(id)))!.checkpoint.channel_values.messages;

/** The thread "t" with one checkpoint "01", written through a second connection to the same file. */
async function threadOnOtherConnection(path: string): Promise<ForkpointSaver> {
  const other = new ForkpointSaver(dbs.open({ path }).fp);
  await put(other, undefined, "01", [one], 1);
  return other;
}

describe("ForkpointSaver under another writer", () => {
  it("forks where its parent is when another connection moved the thread while the put was being prepared", async () => {
    const { fp, path } = dbs.open();
    const other = await threadOnOtherConnection(path);
    const saver = new ForkpointSaver(fp, { serde: new InterleavingSerializer(() => put(other, "01", "02", [one, theirs], 2)) });
    await put(saver, "01", "03", [one, two], 3);
    expect(await read(fp, "03")).toEqual([one, two]);
    expect(await read(fp, "02")).toEqual([one, theirs]);
    expect(await fp.verify()).toMatchObject({ ok: true });
  });

  it("two connections forking the same thread at once each store exactly their own list, on their own branch", async () => {
    const listA = [one, { role: "user", content: "A" }];
    const listB = [one, two, { role: "user", content: "B" }];
    // B's put starts `ticks` microtasks after A's, so that across the runs it lands at every point of A's.
    for (let ticks = 0; ticks <= 12; ticks++) {
      const path = dbs.path();
      const a = new ForkpointSaver(dbs.open({ path }).fp);
      const b = new ForkpointSaver(dbs.open({ path }).fp);
      await put(a, undefined, "01", [one], 1);
      await put(a, "01", "02", [one, two], 2);
      await put(a, "02", "03", [one, two, { role: "user", content: "three" }], 3);
      let later = Promise.resolve();
      for (let i = 0; i < ticks; i++) later = later.then(() => undefined);
      await Promise.all([put(a, "01", "0A", listA, 4), later.then(() => put(b, "02", "0B", listB, 5))]);
      const { fp } = dbs.open({ path });
      expect([await read(fp, "0A"), await read(fp, "0B")]).toEqual([listA, listB]);
      const {
        items: [info],
      } = await fp.listSessions({ userId: "langgraph" });
      // The root and one fork each: no put landed twice.
      expect(await (await fp.getSession(info!.id, { userId: "langgraph" })).branches()).toHaveLength(3);
      expect(await fp.verify()).toMatchObject({ ok: true });
    }
  });

  it("a fork of a thread whose session recorded tool calls undoes them, then lands the put with the fork", async () => {
    const dir = makeTempDir();
    try {
      const file = join(dir, "note.txt");
      const note = defineTool({
        name: "note",
        run: async ({ text }: { text: string }) => {
          writeFileSync(file, text);
          return { text };
        },
        undo: async () => rmSync(file, { force: true }),
      });
      const { fp } = dbs.open({ tools: [note] });
      const saver = new ForkpointSaver(fp);
      await put(saver, undefined, "01", [one], 1);
      await put(saver, "01", "02", [one, two], 2);
      const {
        items: [info],
      } = await fp.listSessions({ userId: "langgraph" });
      const s = await fp.getSession(info!.id, { userId: "langgraph" });
      await s.invoke("note", { text: "written after 02" });
      expect(readFileSync(file, "utf8")).toBe("written after 02");
      const undone: unknown[] = [];
      fp.on("rollback", (r) => {
        undone.push(...(r as { undone: unknown[] }).undone);
      });
      await put(saver, "01", "03", [one, theirs], 3);
      expect(existsSync(file)).toBe(false);
      expect(undone).toHaveLength(1);
      expect(await read(fp, "03")).toEqual([one, theirs]);
      expect(await read(fp, "02")).toEqual([one, two]);
      expect(await fp.verify()).toMatchObject({ ok: true });
    } finally {
      removeDir(dir);
    }
  });
});

describe("ForkpointSaver when its checkpoint id is taken while its fork runs tools", () => {
  it("the fork still finishes (its tools ran) and the put is refused: the session is not left with a move running", async () => {
    const dir = makeTempDir();
    try {
      const path = join(dir, "forkpoint.db");
      const note = defineTool({
        name: "note",
        run: async () => ({ ok: true }),
        // Another process puts the very checkpoint id while this one's fork undoes the call (its row, as it writes it).
        undo: async () => {
          await sqlOn(
            path,
            `INSERT INTO lg_checkpoints SELECT session_id, '03', parent_checkpoint_id, fp_checkpoint_id, type, checkpoint,
            metadata_type, metadata, messages_version FROM lg_checkpoints WHERE checkpoint_id = '02'`,
          );
        },
      });
      const { fp } = dbs.open({ path, tools: [note] });
      const saver = new ForkpointSaver(fp);
      await put(saver, undefined, "01", [one], 1);
      await put(saver, "01", "02", [one, two], 2);
      const {
        items: [info],
      } = await fp.listSessions({ userId: "langgraph" });
      const s = await fp.getSession(info!.id, { userId: "langgraph" });
      await s.invoke("note", {});
      const before = (await s.info()).currentBranchId;
      expect(await put(saver, "01", "03", [one, theirs], 3).catch((e: unknown) => e)).toMatchObject({ code: "CHECKPOINT_EXISTS" });
      expect(await sqlOn(path, "SELECT status FROM moves")).toEqual([{ status: "done" }]);
      expect((await s.info()).currentBranchId).not.toBe(before);
      // The session moves again: no move is left running. (A new run, going back to 02: a step of the run that failed
      // would be refused, as one overtaken by a move is.)
      await saver.put(
        config("02"),
        {
          v: 4,
          id: "04",
          ts: new Date().toISOString(),
          channel_values: { messages: [one, two, theirs] },
          channel_versions: { messages: 4 },
          versions_seen: {},
        },
        { source: "input", step: -1, parents: {} },
        { messages: 4 },
      );
      expect(await read(fp, "04")).toEqual([one, two, theirs]);
    } finally {
      removeDir(dir);
    }
  });
});

/**
 * A serializer that, once armed, runs `after` right after it has written a list (or, with `anyValue`, anything: the
 * put's first await): a node acting while a put is under way.
 */
class ActingSerializer extends JsonPlusSerializer {
  after: (() => void) | null = null;
  anyValue = false;

  override async dumpsTyped(value: unknown): Promise<[string, Uint8Array]> {
    const out = await super.dumpsTyped(value);
    if ((this.anyValue || Array.isArray(value)) && this.after) {
      const run = this.after;
      this.after = null;
      run();
    }
    return out;
  }
}

/** A saver whose serializer, once armed, rewrites `mine` in place: right after the put's first await, or its list's. */
function rewritingSaver(fp: Forkpoint) {
  const serde = new ActingSerializer();
  const mine = { role: "user", content: "mine" };
  const arm = (anyValue: boolean) => {
    serde.anyValue = anyValue;
    serde.after = () => {
      mine.content = "rewritten";
    };
  };
  return { saver: new ForkpointSaver(fp, { serde }), mine, arm };
}

describe("ForkpointSaver while a node acts during a put", () => {
  const [a, b, c, d] = ["a", "b", "c", "d"].map((content) => ({ role: "user", content }));

  it("a message pushed into the list while the put is under way belongs to the next checkpoint, and is stored by it", async () => {
    // Pushed right after the serializer wrote the list's new items, or right after the put's first await.
    for (const anyValue of [false, true]) {
      const { fp } = dbs.open();
      const serde = new ActingSerializer();
      const saver = new ForkpointSaver(fp, { serde });
      await put(saver, undefined, "01", [a], 1);
      const list = [a, b];
      serde.anyValue = anyValue;
      serde.after = () => list.push(c);
      await put(saver, "01", "02", list, 2);
      expect(await read(fp, "02")).toEqual([a, b]);
      await put(saver, "02", "03", [...list, d], 3);
      expect(await read(fp, "03")).toEqual([a, b, c, d]);
    }
  });

  it("a new message rewritten just after the put was called is stored as it was at the call; the rewrite, by the next put", async () => {
    const { fp } = dbs.open();
    const serde = new ActingSerializer();
    const saver = new ForkpointSaver(fp, { serde });
    const mine = { role: "user", content: "mine" };
    const state = { n: 1 };
    const putState = (parent: string, id: string, messages: unknown[], step: number) =>
      saver.put(
        config(parent),
        { v: 4, id, ts: "", channel_values: { messages, state }, channel_versions: { messages: step, state: step }, versions_seen: {} },
        { source: "loop", step, parents: {} },
        { messages: step, state: step },
      );
    await put(saver, undefined, "01", [a], 1);
    serde.anyValue = true;
    serde.after = () => {
      mine.content = "rewritten";
      state.n = 2;
    };
    await putState("01", "02", [a, mine], 2);
    const at02 = (await new ForkpointSaver(fp).getTuple(config("02")))!.checkpoint.channel_values;
    expect(at02).toEqual({ messages: [a, { role: "user", content: "mine" }], state: { n: 1 } });
    await putState("02", "03", [a, mine, c], 3);
    expect(await read(fp, "03")).toEqual([a, { role: "user", content: "rewritten" }, c]);
  });

  it("the same on the general path (a saver that does not know the thread yet): the list is taken as it was at the call", async () => {
    const { fp } = dbs.open();
    await put(new ForkpointSaver(fp), undefined, "01", [a], 1);
    const { saver, mine, arm } = rewritingSaver(fp);
    arm(true);
    await put(saver, "01", "02", [a, mine], 2);
    expect(await read(fp, "02")).toEqual([a, { role: "user", content: "mine" }]);
  });

  it("the same for a put from an older checkpoint by a saver that knows the thread (a fork)", async () => {
    const { fp } = dbs.open();
    const { saver, mine, arm } = rewritingSaver(fp);
    await put(saver, undefined, "01", [a], 1);
    await put(saver, "01", "02", [a, b], 2);
    arm(true);
    await put(saver, "01", "03", [a, b, mine], 3);
    expect(await read(fp, "03")).toEqual([a, b, { role: "user", content: "mine" }]);
    expect(await read(fp, "02")).toEqual([a, b]);
  });

  it("a message rewritten while its put was being written is stored as a new version by the next put", async () => {
    const { fp } = dbs.open();
    const { saver, mine, arm } = rewritingSaver(fp);
    await put(saver, undefined, "01", [a], 1);
    arm(false);
    await put(saver, "01", "02", [a, mine], 2);
    expect(await read(fp, "02")).toEqual([a, { role: "user", content: "mine" }]);
    await put(saver, "02", "03", [a, mine, c], 3);
    expect(await read(fp, "03")).toEqual([a, { role: "user", content: "rewritten" }, c]);
  });
});

/** A serializer that, once armed, runs `before` (awaited) the next time it reads a value back: a read under way. */
class ReadingSerializer extends JsonPlusSerializer {
  before: (() => Promise<unknown>) | null = null;

  override async loadsTyped(type: string, data: Uint8Array | string): Promise<unknown> {
    if (this.before) {
      const run = this.before;
      this.before = null;
      await run();
    }
    return super.loadsTyped(type, data);
  }
}

describe("ForkpointSaver while another saver deletes the thread", () => {
  it("a put that was under way goes to the thread started anew", async () => {
    const { fp } = dbs.open();
    const other = new ForkpointSaver(fp);
    await put(other, undefined, "01", [one], 1);
    // A saver that does not know the thread yet takes the general path, which reads the thread before writing.
    const saver = new ForkpointSaver(fp, { serde: new InterleavingSerializer(() => other.deleteThread("t")) });
    await put(saver, "01", "02", [one, two], 2);
    expect(await read(fp, "02")).toEqual([one, two]);
    expect(await new ForkpointSaver(fp).getTuple(config("01"))).toBeUndefined();
    expect((await fp.listSessions({ userId: "langgraph" })).items).toHaveLength(1);
  });

  it("a read that was under way finds nothing (getTuple undefined, list without it), not an error", async () => {
    const { fp } = dbs.open();
    const other = new ForkpointSaver(fp);
    await put(other, undefined, "01", [one], 1);
    await put(other, "01", "02", [one, two], 2);
    const serde = new ReadingSerializer();
    const saver = new ForkpointSaver(fp, { serde });
    serde.before = () => other.deleteThread("t");
    expect(await saver.getTuple(config("02"))).toBeUndefined();
    await put(other, undefined, "03", [two], 3);
    serde.before = () => other.deleteThread("t");
    const listed: unknown[] = [];
    for await (const t of saver.list(config())) listed.push(t);
    expect(listed).toEqual([]);
  });

  it("pending writes put while the thread is deleted belong to the thread started anew: a later delete leaves none", async () => {
    const { fp, path } = dbs.open();
    const other = new ForkpointSaver(fp);
    await put(other, undefined, "01", [one], 1);
    const saver = new ForkpointSaver(fp, { serde: new InterleavingSerializer(() => other.deleteThread("t")) });
    await saver.putWrites(config("01"), [["messages", [two]]], "task-1");
    expect((await fp.listSessions({ userId: "langgraph" })).items).toHaveLength(1);
    await other.deleteThread("t");
    expect(await sqlOn(path, "SELECT count(*) AS n FROM lg_writes")).toEqual([{ n: 0 }]);
  });
});
