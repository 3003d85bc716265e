// listSessions items carry what a sidebar row shows (the current lineage's last message, as a preview, and its message
// count), read with the page in one statement along indexes, and agreeing with summary() however the session moved.
import { describe, expect, it } from "vitest";
import type { Forkpoint, MessageInput, SessionHandle, SessionListItem } from "../../src/index.js";
import { PREVIEW_LENGTH } from "../../src/models/preview.js";
import { LIST_SESSIONS as PG_LIST, LIST_ALL_SESSIONS as PG_LIST_ALL } from "../../src/store/postgres/session-listing.js";
import { LIST_SESSIONS as SQLITE_LIST, LIST_ALL_SESSIONS as SQLITE_LIST_ALL } from "../../src/store/sqlite/session-listing.js";
import { onPostgres, sqlOn } from "../fixtures/backend.js";
import { prng } from "../fixtures/prng.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

async function items(fp: Forkpoint, userId = "alice"): Promise<SessionListItem[]> {
  return (await fp.listSessions({ userId, limit: 100 })).items;
}

async function itemOf(fp: Forkpoint, s: SessionHandle): Promise<SessionListItem> {
  const item = (await items(fp, (await s.info()).userId)).find((i) => i.id === s.id);
  if (!item) throw new Error(`session ${s.id} is not listed`);
  return item;
}

/** Content's preview as the listing shows it, after appending it as the session's only message. */
async function previewOf(fp: Forkpoint, content: MessageInput["content"]) {
  const s = await fp.createSession({ userId: "preview" });
  await s.append({ role: "assistant", content });
  return (await itemOf(fp, s)).lastMessage!;
}

describe("listSessions items", () => {
  it("carry the current lineage's last message and message count: none before the first message", async () => {
    const { fp } = dbs.open();
    const empty = await fp.createSession({ userId: "alice", title: "empty" });
    const s = await fp.createSession({ userId: "alice", title: "chat" });
    const [question] = await s.append({ role: "user", content: "Where to stay in Lisbon?" });
    const [answer] = await s.append({ role: "assistant", content: "Alfama, or near the river.", clientId: "ui-7" });
    // A tool call and a state change after the last message: still the last message, still two.
    await s.recordToolCall({ tool: "search", args: { q: "hotels" }, result: { n: 3 } });
    await s.setState({ step: 2 });

    const list = await items(fp);
    expect(list.map((i) => i.id)).toEqual([s.id, empty.id]);
    expect(list[1]).toEqual({ ...(await empty.info()), lastMessage: null, messageCount: 0 });
    expect(list[0]).toEqual({
      ...(await s.info()),
      messageCount: 2,
      lastMessage: {
        id: answer!.id,
        clientId: "ui-7",
        branchId: answer!.branchId,
        position: answer!.position,
        role: "assistant",
        preview: "Alfama, or near the river.",
        truncated: false,
        createdAt: answer!.createdAt,
      },
    });
    expect(question!.position).toBe(1);
    // The operator listing carries the same.
    const all = (await fp.listSessions({ all: true })).items;
    expect(all.find((i) => i.id === s.id)).toEqual(list[0]);
    expect(all.find((i) => i.id === empty.id)).toEqual(list[1]);
  });

  it("follow the session where it moves: edit, rollback to before a fork, switch, undo", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const [m1, m2] = await s.append([
      { role: "user", content: "one" },
      { role: "assistant", content: "two" },
    ]);
    const early = await s.checkpoint({ name: "early" });
    await s.append([
      { role: "user", content: "three" },
      { role: "assistant", content: "four" },
    ]);
    const edited = await s.edit(m1!.id, { role: "user", content: "ONE" });
    expect(await itemOf(fp, s)).toMatchObject({ messageCount: 1, lastMessage: { id: edited.message.id, preview: "ONE" } });
    // Back on a branch with no entry of its own: its last message is its parent's, before the fork.
    await s.rollback(early.id);
    expect(await itemOf(fp, s)).toMatchObject({ messageCount: 2, lastMessage: { id: m2!.id, preview: "two" } });
    const atFork = await s.checkpoint({ name: "at the fork" });
    await s.rollback(atFork.id);
    expect(await itemOf(fp, s)).toMatchObject({ messageCount: 2, lastMessage: { id: m2!.id } });
    await s.switchBranch(edited.branch.id);
    expect(await itemOf(fp, s)).toMatchObject({ messageCount: 1, lastMessage: { id: edited.message.id } });
    await s.undo();
    expect(await itemOf(fp, s)).toMatchObject({ messageCount: 2, lastMessage: { id: m2!.id } });
  });

  it("agree with summary() for every session after random writes and moves (seeded)", async () => {
    const { fp } = dbs.open();
    const random = prng(20260535);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
    const sessions = [
      await fp.createSession({ userId: "alice" }),
      await fp.createSession({ userId: "alice" }),
      await fp.createSession({ userId: "alice" }),
    ];
    const checkpoints = new Map<string, string[]>(sessions.map((s) => [s.id, []]));
    for (let step = 0; step < 90; step++) {
      const s = pick(sessions);
      const op = random();
      if (op < 0.35) await s.append({ role: pick(["user", "assistant"]), content: `m${step}` });
      else if (op < 0.45) await s.setState({ step });
      else if (op < 0.52) await s.recordToolCall({ tool: "t", args: { step }, result: null });
      else if (op < 0.64) checkpoints.get(s.id)!.push((await s.checkpoint({ name: `c${step}` })).id);
      else if (op < 0.76 && checkpoints.get(s.id)!.length > 0) await s.rollback(pick(checkpoints.get(s.id)!));
      else if (op < 0.86) {
        const history = await s.history();
        if (history.length > 0) await s.edit(pick(history).id, { content: `e${step}` });
      } else if (op < 0.94) await s.switchBranch(pick(await s.branches()).id);
      else await s.undo().catch(() => undefined);
      if (step % 10 !== 9) continue;
      for (const item of await items(fp)) {
        const sum = await (await fp.getSession(item.id, { userId: "alice" })).summary();
        expect([item.id, item.messageCount, item.lastMessage?.id ?? null]).toEqual([item.id, sum.messages, sum.lastMessage?.id ?? null]);
        expect(item.lastMessage?.preview ?? null).toBe((sum.lastMessage?.content as string | undefined) ?? null);
      }
    }
  });

  it("preview the text of each framework's content: strings, AI SDK parts, OpenAI Agents items, LangChain parts", async () => {
    const { fp } = dbs.open();
    expect(await previewOf(fp, "  Hello,\n\n\tworld  ")).toMatchObject({ preview: "Hello, world", truncated: false });
    expect(
      await previewOf(fp, [
        { type: "step-start" },
        { type: "reasoning", text: "thinking it over" },
        { type: "text", text: "Three hotels" },
        { type: "tool-search", toolCallId: "c1", state: "output-available", input: { q: "x" }, output: { text: "raw" } },
        { type: "text", text: "near the station." },
      ]),
    ).toMatchObject({ preview: "Three hotels near the station.", truncated: false });
    expect(
      await previewOf(fp, { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Done." }] }),
    ).toMatchObject({ preview: "Done.", truncated: false });
    expect(await previewOf(fp, { role: "user", content: [{ type: "input_text", text: "Book it" }] })).toMatchObject({ preview: "Book it" });
    expect(await previewOf(fp, { type: "function_call", name: "book", callId: "c2", arguments: "{}" })).toMatchObject({
      preview: "",
      truncated: false,
    });
    expect(await previewOf(fp, 42)).toMatchObject({ preview: "" });
  });

  it(`cut long text to ${PREVIEW_LENGTH} characters between user-perceived characters, and say so`, async () => {
    const { fp } = dbs.open();
    const long = await previewOf(fp, "word ".repeat(5000));
    expect(long.truncated).toBe(true);
    expect(long.preview.length).toBeLessThanOrEqual(PREVIEW_LENGTH);
    expect(long.preview).toMatch(/^(word ){30,}word…$/);
    // An emoji with a skin tone (4 UTF-16 units) astride the limit is kept whole or left out, never split.
    const emoji = await previewOf(fp, `${"a".repeat(PREVIEW_LENGTH - 3)}👍🏽 and more`);
    expect(emoji.truncated).toBe(true);
    expect(emoji.preview.isWellFormed()).toBe(true);
    expect(emoji.preview).toBe(`${"a".repeat(PREVIEW_LENGTH - 3)}…`);
    const exact = await previewOf(fp, "b".repeat(PREVIEW_LENGTH));
    expect(exact).toMatchObject({ preview: "b".repeat(PREVIEW_LENGTH), truncated: false });
    // Text spread over many parts is gathered only as far as a preview needs.
    const parts = await previewOf(
      fp,
      Array.from({ length: 2000 }, (_, i) => ({ type: "text", text: `part ${i}` })),
    );
    expect(parts).toMatchObject({ truncated: true });
    expect(parts.preview.startsWith("part 0 part 1 part 2")).toBe(true);
  });

  it("read the page and every preview along indexes: no scan of entries, branches or sessions (query plans)", async () => {
    const { fp, path: file } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "hi" });
    const cp = await s.checkpoint();
    await s.rollback(cp.id);
    for (const [statement, values] of onPostgres
      ? ([
          [PG_LIST, ["'alice'", "9007199254740991", "20"]],
          [PG_LIST_ALL, ["9007199254740991", "20"]],
        ] as const)
      : ([
          [SQLITE_LIST, { userId: "alice", before: Number.MAX_SAFE_INTEGER, limit: 20 }],
          [SQLITE_LIST_ALL, { before: Number.MAX_SAFE_INTEGER, limit: 20 }],
        ] as const)) {
      const plan = onPostgres
        ? (
            await sqlOn<{ "QUERY PLAN": string }>(
              file,
              `SET enable_seqscan = off; EXPLAIN ${(values as readonly string[]).reduceRight((text, v, i) => text.replaceAll(`$${i + 1}`, v), statement)}`,
            )
          )
            .map((r) => r["QUERY PLAN"])
            .join("\n")
        : (await sqlOn<{ detail: string }>(file, `EXPLAIN QUERY PLAN ${statement}`, [values])).map((r) => r.detail).join("\n");
      // A scan of the page or of the lineage walk (the statement's own small tables) is fine; of a stored table it is not.
      if (onPostgres) expect(plan, statement).not.toMatch(/Seq Scan/);
      else expect(plan.split("\n").filter((line) => /\bSCAN\b/.test(line) && !/\bSCAN (p|lin)\b/.test(line))).toEqual([]);
    }
  });
});
