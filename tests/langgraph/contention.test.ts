// ForkpointSaver when something else acts while a put is under way: another connection (another process, as far as
// SQLite knows) moving the thread between the put's landing and its write (the put lands again, for no longer than the
// busy timeout, then fails as BUSY); a node pushing to or rewriting the messages while the put awaits its write (the
// next put still stores what the first did not).
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { describe, expect, it } from "vitest";
import { DatabaseError, type Forkpoint } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { dumpDatabase, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const config = (parent?: string) => ({ configurable: { thread_id: "t", checkpoint_ns: "", ...(parent ? { checkpoint_id: parent } : {}) } });
const put = (saver: ForkpointSaver, parent: string | undefined, id: string, messages: unknown[], step: number) =>
  saver.put(config(parent),
    { v: 4, id, ts: new Date().toISOString(), channel_values: { messages }, channel_versions: { messages: step }, versions_seen: {} },
    { source: "loop", step, parents: {} }, { messages: step });
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

/** The thread "t" with one checkpoint "01", written through a second connection to the same file. */
async function threadOnOtherConnection(path: string): Promise<ForkpointSaver> {
  const other = new ForkpointSaver(dbs.open({ path }).fp);
  await put(other, undefined, "01", [one], 1);
  return other;
}

describe("ForkpointSaver under another writer", () => {
  it("lands again when another connection moved the thread between its landing and its write", async () => {
    const { fp, path } = dbs.open();
    const other = await threadOnOtherConnection(path);
    const saver = new ForkpointSaver(fp, { serde: new InterleavingSerializer(() => put(other, "01", "02", [one, theirs], 2)) });
    await put(saver, "01", "03", [one, two], 3);
    const read = async (id: string) => (await new ForkpointSaver(fp).getTuple(config(id)))!.checkpoint.channel_values.messages;
    expect(await read("03")).toEqual([one, two]);
    expect(await read("02")).toEqual([one, theirs]);
    expect(await fp.verify()).toMatchObject({ ok: true });
  });

  it("fails as BUSY once the thread kept moving past the busy timeout, and writes nothing", async () => {
    const { fp, path } = dbs.open({ busyTimeoutMs: 0 });
    const other = await threadOnOtherConnection(path);
    let before: Awaited<ReturnType<typeof dumpDatabase>> | undefined;
    const saver = new ForkpointSaver(fp, {
      serde: new InterleavingSerializer(async () => {
        await put(other, "01", "02", [one, theirs], 2);
        before = dumpDatabase(path);
      }),
    });
    const error = await put(saver, "01", "03", [one, two], 3).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatabaseError);
    expect(error).toMatchObject({ code: "BUSY", message: expect.stringMatching(/thread t: .*busy timeout.*03/) });
    expect(dumpDatabase(path)).toEqual(before);
    expect(await new ForkpointSaver(fp).getTuple(config("03"))).toBeUndefined();
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

describe("ForkpointSaver while a node acts during a put", () => {
  const read = async (fp: Forkpoint, id: string) =>
    (await new ForkpointSaver(fp).getTuple(config(id)))!.checkpoint.channel_values.messages;
  const [a, b, c, d] = ["a", "b", "c", "d"].map((content) => ({ role: "user", content }));

  it("a message pushed into the list while its put was being written is stored by the next put", async () => {
    const { fp } = dbs.open();
    const serde = new ActingSerializer();
    const saver = new ForkpointSaver(fp, { serde });
    await put(saver, undefined, "01", [a], 1);
    const list = [a, b];
    serde.after = () => list.push(c);
    await put(saver, "01", "02", list, 2);
    await put(saver, "02", "03", [...list, d], 3);
    expect(await read(fp, "03")).toEqual([a, b, c, d]);
  });

  it("a message pushed into the list just after the put was called belongs to the next checkpoint, not to this one", async () => {
    const { fp } = dbs.open();
    const serde = new ActingSerializer();
    const saver = new ForkpointSaver(fp, { serde });
    await put(saver, undefined, "01", [a], 1);
    const list = [a, b];
    serde.anyValue = true;
    serde.after = () => list.push(c);
    await put(saver, "01", "02", list, 2);
    expect(await read(fp, "02")).toEqual([a, b]);
    await put(saver, "02", "03", [...list, d], 3);
    expect(await read(fp, "03")).toEqual([a, b, c, d]);
  });

  it("a message rewritten while its put was being written is stored as a new version by the next put", async () => {
    const { fp } = dbs.open();
    const serde = new ActingSerializer();
    const saver = new ForkpointSaver(fp, { serde });
    const mine = { role: "user", content: "mine" };
    await put(saver, undefined, "01", [a], 1);
    serde.after = () => { mine.content = "rewritten"; };
    await put(saver, "01", "02", [a, mine], 2);
    expect(await read(fp, "02")).toEqual([a, { role: "user", content: "mine" }]);
    await put(saver, "02", "03", [a, mine, c], 3);
    expect(await read(fp, "03")).toEqual([a, { role: "user", content: "rewritten" }, c]);
  });
});
