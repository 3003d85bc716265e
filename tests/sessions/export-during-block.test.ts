// An export or clone while another opener's atomic() block fails: the document holds the session as of its first
// read, so the branch the block's rollback makes meanwhile is not named in it, and its import takes it.
import { describe, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { engineOf } from "../../src/sessions/forkpoint.js";
import type { Body } from "../../src/store/port/index.js";
import { openForkpoint } from "../fixtures/backend.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** Runs `between` once, after the first read transaction of `fp` (an export's listing of the session's tree). */
function afterFirstRead(fp: Forkpoint, between: () => Promise<void>): void {
  const store = engineOf(fp).ctx.store;
  const read = store.read.bind(store);
  let done = false;
  store.read = async <T>(body: Body<T>): Promise<T> => {
    const result = await read(body);
    if (!done) {
      done = true;
      await between();
    }
    return result;
  };
}

/** A session another opener's block wrote on and then failed in, between the first read of `fp` and the rest. */
async function blockFailsMeanwhile(fp: Forkpoint, path: string) {
  const s = await fp.createSession({ userId: "u" });
  await s.append({ role: "user", content: "q" });
  const other = dbs.track(openForkpoint({ path }));
  const s2 = await other.getSession(s.id, { userId: "u" });
  afterFirstRead(fp, async () => {
    const failed = await s2
      .atomic(async () => {
        await s2.append({ role: "assistant", content: "in block" });
        throw new Error("boom");
      })
      .catch((e: Error) => e.message);
    expect(failed).toBe("boom");
  });
  return s;
}

describe("export during a failing block", () => {
  it("names only branches it holds, and its import exports the same bytes", async () => {
    const { fp, path } = dbs.open();
    const s = await blockFailsMeanwhile(fp, path);
    const doc = await fp.exportSession(s.id, { userId: "u" });
    const ids = new Set(doc.branches.map((b) => b.id));
    for (const b of doc.branches) if (b.continuedBy !== undefined) expect(ids.has(b.continuedBy)).toBe(true);
    const target = dbs.open().fp;
    const copy = await target.importSession(doc, { userId: "u" });
    expect(JSON.stringify(await target.exportSession(copy.id, { userId: "u" }))).toBe(JSON.stringify(doc));
    expect((await copy.history()).map((m) => m.content)).toEqual(["q"]);
  });

  it("a clone made meanwhile is whole", async () => {
    const { fp, path } = dbs.open();
    const s = await blockFailsMeanwhile(fp, path);
    const copy = await fp.clone(s.id, { userId: "u" });
    expect((await copy.history()).map((m) => m.content)).toEqual(["q"]);
    expect((await fp.verify()).problems).toEqual([]);
  });
});
