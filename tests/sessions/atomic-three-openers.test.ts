// Guarded blocks of three openers at once on one session: a failed block never brings back another failed block's
// writes, and takes back none of another opener's block that wrote nothing after its checkpoint.
import { describe, expect, it } from "vitest";
import type { SessionHandle } from "../../src/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** A promise and its resolver: the blocks take turns. */
function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** Three handles (three openers) on one new session holding "start". */
async function threeOpeners(): Promise<[SessionHandle, SessionHandle, SessionHandle]> {
  const { fp, path } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  await s.append({ role: "user", content: "start" });
  await s.setState({ start: 1 });
  const open = () => dbs.open({ path }).fp.getSession(s.id, { userId: "u" });
  return [s, await open(), await open()];
}

const conversation = async (s: SessionHandle) => ({ history: (await s.history()).map((m) => m.content), state: await s.getState() });

describe("atomic blocks of three openers", () => {
  it("a block begun among a failed block's writes on the first one's rollback branch brings none of them back", async () => {
    const [x, f, y] = await threeOpeners();
    const xWrote = latch(),
      fBegan = latch(),
      xDone = latch(),
      fWrote = latch(),
      yWrote = latch(),
      fDone = latch();
    // X writes, F begins (its checkpoint holds X's write), X fails; F writes on X's rollback branch, Y begins among
    // F's writes and writes; F fails, then Y.
    const first = x.atomic(async () => {
      await x.append({ role: "user", content: "X" });
      xWrote.open();
      await fBegan.opened;
      throw new Error("X failed");
    });
    const second = (async () => {
      await xWrote.opened;
      return f.atomic(async () => {
        fBegan.open();
        await xDone.opened;
        await f.append({ role: "user", content: "F" });
        await f.setState((p) => ({ ...(p as object), F: 1 }));
        fWrote.open();
        await yWrote.opened;
        throw new Error("F failed");
      });
    })();
    const third = (async () => {
      await fWrote.opened;
      return y.atomic(async () => {
        await y.append({ role: "user", content: "Y" });
        yWrote.open();
        await fDone.opened;
        throw new Error("Y failed");
      });
    })();
    expect((await rejectionOf(first)).message).toBe("X failed");
    xDone.open();
    expect((await rejectionOf(second)).message).toBe("F failed");
    expect(await conversation(x)).toEqual({ history: ["start"], state: { start: 1 } });
    fDone.open();
    expect((await rejectionOf(third)).message).toBe("Y failed");
    expect(await conversation(x)).toEqual({ history: ["start"], state: { start: 1 } });
    expect(await conversation(y)).toEqual({ history: ["start"], state: { start: 1 } });
    // A move to the head of any branch the failed blocks wrote on lands where none of them ran.
    for (const branch of await x.branches()) {
      await x.switchBranch(branch.id);
      expect(await conversation(x)).toEqual({ history: ["start"], state: { start: 1 } });
    }
  });

  it("a move to a branch made among a failed block's writes, which it wrote on, lands where it never ran", async () => {
    const [f, c] = await threeOpeners();
    const fWrote = latch(),
      cDone = latch();
    // F writes; C's block begins after F's write and fails (its rollback makes a branch there); F writes on that branch
    // and fails: every move to that branch's head lands where neither block ran.
    const failed = f.atomic(async () => {
      await f.append({ role: "user", content: "F1" });
      fWrote.open();
      await cDone.opened;
      await f.append({ role: "user", content: "F2" });
      throw new Error("F failed");
    });
    await fWrote.opened;
    const other = await rejectionOf(
      c.atomic(async () => {
        await c.append({ role: "user", content: "C1" });
        throw new Error("C failed");
      }),
    );
    expect(other.message).toBe("C failed");
    cDone.open();
    expect((await rejectionOf(failed)).message).toBe("F failed");
    for (const branch of await f.branches()) {
      await f.switchBranch(branch.id);
      expect(await conversation(f)).toEqual({ history: ["start"], state: { start: 1 } });
    }
  });

  it("a block begun on a branch another block's rollback made among a failed block's writes brings none back", async () => {
    const [a, b] = await threeOpeners();
    const aWrote = latch(),
      bBegan = latch(),
      aDone = latch();
    // A writes; B's first block fails after it (its rollback branch holds A's write); B's second block begins there;
    // A fails, then B's second block: neither brings A's write back.
    const first = a.atomic(async () => {
      await a.append({ role: "user", content: "A" });
      await a.setState((p) => ({ ...(p as object), A: 1 }));
      aWrote.open();
      await bBegan.opened;
      throw new Error("A failed");
    });
    await aWrote.opened;
    const once = b.atomic(async () => {
      await b.append({ role: "user", content: "B1" });
      throw new Error("B1 failed");
    });
    expect((await rejectionOf(once)).message).toBe("B1 failed");
    expect(await conversation(b)).toEqual({ history: ["start", "A"], state: { start: 1, A: 1 } });
    const second = b.atomic(async () => {
      bBegan.open();
      await aDone.opened;
      throw new Error("B2 failed");
    });
    expect((await rejectionOf(first)).message).toBe("A failed");
    aDone.open();
    expect((await rejectionOf(second)).message).toBe("B2 failed");
    expect(await conversation(a)).toEqual({ history: ["start"], state: { start: 1 } });
    expect(await conversation(b)).toEqual({ history: ["start"], state: { start: 1 } });
  });

  it("another opener's block that writes nothing while a block fails keeps all its writes", async () => {
    const [a, b] = await threeOpeners();
    const aHalf = latch(),
      bBegan = latch(),
      bDone = latch();
    const done = a.atomic(async () => {
      await a.append({ role: "user", content: "A1" });
      aHalf.open();
      await bBegan.opened;
      await bDone.opened;
      await a.append({ role: "assistant", content: "A2" });
    });
    const failed = (async () => {
      await aHalf.opened;
      return b.atomic(async () => {
        bBegan.open();
        throw new Error("B failed");
      });
    })();
    expect((await rejectionOf(failed)).message).toBe("B failed");
    bDone.open();
    await done;
    expect((await conversation(a)).history).toEqual(["start", "A1", "A2"]);
  });
});
