// popItem and addItems at once, from two handles and from real processes: no acknowledged item is ever lost. Each
// added item ends up on the current branch, in exactly one popItem's answer, or right after its writer's previous item
// when a pop took that one; a pop that moves the world (undoing a tool call) keeps an item added while the undo ran.
import type { AgentInputItem } from "@openai/agents";
import { describe, expect, it } from "vitest";
import { defineTool, type SessionHandle } from "../../src/index.js";
import { ForkpointSession } from "../../src/openai-agents/index.js";
import { openForkpoint } from "../fixtures/backend.js";
import { tempDatabases } from "../helpers.js";
import { sessionWorker, type SessionWorker } from "./worker-driver.js";

const dbs = tempDatabases();

const user = (content: string): AgentInputItem => ({ role: "user", content });
const contentOf = (item: AgentInputItem) => (item as { content: string }).content;

/** Adds `count` items tagged `tag` one call each, popping after every `popEvery`-th: what it added and popped. */
async function race(memory: ForkpointSession, tag: string, count: number, popEvery: number) {
  const added: string[] = [];
  const popped: AgentInputItem[] = [];
  for (let i = 0; i < count; i++) {
    await memory.addItems([user(`${tag}-${i}`)]);
    added.push(`${tag}-${i}`);
    if ((i + 1) % popEvery === 0) {
      const item = await memory.popItem();
      if (item) popped.push(item);
    }
  }
  return { added, popped };
}

/**
 * Every acknowledged item is stored exactly once in the session's tree, and nothing else is: on the current branch, or
 * popped, or, added after a pop took its writer's previous item (`addItems` goes on after the last item it read or
 * wrote, as `append`'s `after` does), right after that item on its lineage. Each writer's order holds on the branch.
 */
async function expectNothingLost(s: SessionHandle, added: string[], popped: AgentInputItem[], final: AgentInputItem[]) {
  const stored = new Map<string, { content: string; before: string | undefined }>();
  for (const branch of await s.branches()) {
    const lineage = await s.history({ branchId: branch.id });
    lineage.forEach((m, i) => {
      const before = i === 0 ? undefined : contentOf(lineage[i - 1]!.content as AgentInputItem);
      if (m.branchId === branch.id || !stored.has(m.id)) stored.set(m.id, { content: contentOf(m.content as AgentInputItem), before });
    });
  }
  expect([...stored.values()].map((m) => m.content).sort()).toEqual([...added].sort());
  const onBranch = final.map(contentOf);
  const poppedContents = popped.map(contentOf);
  expect(new Set(poppedContents).size).toBe(poppedContents.length);
  expect(poppedContents.filter((c) => onBranch.includes(c))).toEqual([]);
  for (const { content, before } of stored.values()) {
    if (onBranch.includes(content) || poppedContents.includes(content)) continue;
    const [tag, i] = content.split("-");
    expect(before).toBe(`${tag}-${Number(i) - 1}`);
  }
  for (const tag of new Set(added.map((a) => a.split("-")[0]))) {
    const mine = onBranch.filter((c) => c.startsWith(`${tag}-`)).map((c) => Number(c.split("-")[1]));
    expect(mine).toEqual([...mine].sort((a, b) => a - b));
  }
}

describe("popItem and addItems at once", () => {
  it("two handles of one process: every added item is on the branch or was popped, once", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const popper = new ForkpointSession(s);
    const adder = new ForkpointSession(await dbs.track(openForkpoint({ path })).getSession(s.id, { userId: "u" }));
    const popped: AgentInputItem[] = [];
    const adding = race(adder, "a", 90, Number.MAX_SAFE_INTEGER);
    const adder2 = new ForkpointSession(await dbs.track(openForkpoint({ path })).getSession(s.id, { userId: "u" }));
    const adding2 = race(adder2, "b", 90, Number.MAX_SAFE_INTEGER);
    const popping = (async () => {
      for (let i = 0; i < 45; i++) {
        const item = await popper.popItem();
        if (item) popped.push(item);
      }
    })();
    const [{ added }, { added: added2 }] = await Promise.all([adding, adding2, popping]);
    await expectNothingLost(s, [...added, ...added2], popped, await popper.getItems());
    // Both kept going all along: some pops found items to pop.
    expect(popped.length).toBeGreaterThan(0);
  });

  it("three processes adding and popping at once: nothing acknowledged is lost", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const memory = new ForkpointSession(s);
    const workers: SessionWorker[] = [];
    try {
      for (let i = 0; i < 2; i++) workers.push(await sessionWorker(path, s.id, "u"));
      const runs = await Promise.all([
        ...workers.map((w, i) => w.send({ op: "race", tag: `w${i}`, adds: 40, popEvery: 3 })),
        race(memory, "p", 40, 2).then((r) => ({ ok: true, ...r })),
      ]);
      for (const run of runs) expect(run).toMatchObject({ ok: true });
      await expectNothingLost(
        s,
        runs.flatMap((r) => r.added as string[]),
        runs.flatMap((r) => r.popped as AgentInputItem[]),
        await memory.getItems(),
      );
    } finally {
      for (const w of workers) expect(await w.stop()).toBe(0);
    }
  });

  it("an item another process adds while a pop undoes a tool call goes on after the pop, not behind it", async () => {
    let worker: SessionWorker | undefined;
    let adding: Promise<unknown> | undefined;
    const effect = defineTool({
      name: "effect",
      run: async () => "done",
      // The undo runs between the pop's read-and-journal and its finish: another process adds an item meanwhile (its
      // write waits for the pop to end).
      undo: async () => {
        adding = worker!.send({ op: "add", items: [user("added during the undo")] });
        await new Promise((r) => setTimeout(r, 100));
      },
    });
    const { fp, path } = dbs.open({ tools: [effect] });
    const s = await fp.createSession({ userId: "u" });
    const memory = new ForkpointSession(s);
    worker = await sessionWorker(path, s.id, "u");
    try {
      await memory.addItems([user("question")]);
      await s.invoke(effect, {});
      await memory.addItems([user("answer")]);
      expect(await memory.popItem()).toEqual(user("answer"));
      expect(await adding).toEqual({ ok: true });
      expect(await memory.getItems()).toEqual([user("question"), user("added during the undo")]);
      expect((await s.toolTrack()).map((t) => t.tool)).toEqual([]);
      // The old branch keeps what it had.
      const old = (await s.branches()).find((b) => b.parentId === null)!;
      expect((await s.history({ branchId: old.id })).map((m) => contentOf(m.content as AgentInputItem))).toEqual(["question", "answer"]);
    } finally {
      expect(await worker.stop()).toBe(0);
    }
  });
});
