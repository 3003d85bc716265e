// Versions pair answers to the same question: two messages are versions of each other when the nearest message before
// each is the same message, whatever tool calls and state changes come between; versions(), history({ withVersions })
// and the CLI agree.
import { describe, expect, it } from "vitest";
import { loadChat, saveChat } from "../../src/ai/index.js";
import type { SessionHandle } from "../../src/index.js";
import { runInProcess } from "../cli/in-process.js";
import { onPostgres } from "../fixtures/backend.js";
import { tempDatabases } from "../helpers.js";
import { answersOutOfBranchOrder, lastVersions } from "../fixtures/versions-across-branches.js";

const dbs = tempDatabases();

/** Each message of a branch's history with its picker as history({ withVersions }) gives it, and as versions() does. */
async function pickers(s: SessionHandle, branchId: string) {
  const page = await s.history({ branchId, withVersions: true });
  const out: { content: unknown; history: string; versions: string }[] = [];
  for (const m of page) {
    const v = await s.versions(m.id);
    expect(m.versions.branchIds).toEqual(v.versions.map((x) => x.branchId));
    out.push({ content: m.content, history: `${m.versions.index + 1}/${m.versions.count}`, versions: `${v.index + 1}/${v.count}` });
  }
  return out;
}

describe("versions pair answers to the same question", () => {
  it("an agent's regenerated answer is a version whatever tools each answer called", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const [question] = await s.append({ role: "user", content: "book a hotel" });
    const asked = await s.checkpoint({ name: "asked" });
    await s.recordToolCall({ tool: "search", args: { city: "Lisbon" }, result: ["H1"] });
    await s.setState({ hotel: "H1" });
    const [first] = await s.append({ role: "assistant", content: "Booked H1" });
    // Regenerated: from right after the question, another loop with other calls.
    const again = await s.rollback(asked.id);
    await s.recordToolCall({ tool: "search", args: { city: "Lisbon", stars: 4 }, result: ["H2"] });
    await s.recordToolCall({ tool: "book", args: { hotel: "H2" }, result: "ok" });
    await s.recordToolCall({ tool: "email", args: { to: "alice" }, result: "sent" });
    const [second] = await s.append({ role: "assistant", content: "Booked H2" });
    expect(second!.position).not.toBe(first!.position);
    const v = await s.versions(second!.id);
    expect(v.versions.map((x) => x.message.content)).toEqual(["Booked H1", "Booked H2"]);
    expect(v.index).toBe(1);
    expect((await s.versions(first!.id)).index).toBe(0);
    // The question itself has one version, and so does each answer's following message.
    expect((await s.versions(question!.id)).count).toBe(1);
    expect(await pickers(s, again.branch.id)).toEqual([
      { content: "book a hotel", history: "1/1", versions: "1/1" },
      { content: "Booked H2", history: "2/2", versions: "2/2" },
    ]);
    expect(await pickers(s, first!.branchId)).toEqual([
      { content: "book a hotel", history: "1/1", versions: "1/1" },
      { content: "Booked H1", history: "1/2", versions: "1/2" },
    ]);
  });

  it("edits, regenerates and branches forked at tool calls between two messages all count; later messages do not", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const [q, a] = await s.append([
      { role: "user", content: "q" },
      { role: "assistant", content: "a" },
    ]);
    const root = a!.branchId;
    await s.recordToolCall({ tool: "t", args: {}, result: 1 });
    const afterTool = await s.checkpoint();
    const [next] = await s.append({ role: "user", content: "next" });
    // A version of `a` by regenerate (same position), and one of `next` on a branch forked at the tool call.
    const regenerated = await s.regenerate(a!.id, { content: "a2" });
    await s.switchBranch(root);
    const forked = await s.rollback(afterTool.id);
    await s.setState({ x: 1 });
    const [other] = await s.append({ role: "user", content: "other next" });
    expect((await s.versions(a!.id)).versions.map((x) => x.message.content)).toEqual(["a", "a2"]);
    expect((await s.versions(next!.id)).versions.map((x) => x.message.id)).toEqual([next!.id, other!.id]);
    expect(other!.branchId).toBe(forked.branch.id);
    // A version of the first message: an edit of it (both have no message before them).
    const edited = await s.edit(q!.id, { content: "q, edited" });
    expect((await s.versions(q!.id)).versions.map((x) => x.message.content)).toEqual(["q", "q, edited"]);
    expect((await s.versions(edited.message.id)).index).toBe(1);
    expect((await s.versions(regenerated.message.id)).index).toBe(1);
  });

  it("are ordered by creation, not by branch, in the session and in its copies (export and import, clone)", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await answersOutOfBranchOrder(s);
    const want = { versions: [1, ["answer 1", "answer 2"]], history: [1, ["answer 1", "answer 2"]] };
    expect(await lastVersions(s)).toEqual(want);
    expect(await lastVersions(await fp.clone(s.id, { userId: "alice" }))).toEqual(want);
    const { fp: other } = dbs.open();
    expect(await lastVersions(await other.importSession(await fp.exportSession(s.id, { userId: "alice" }), { userId: "alice" }))).toEqual(
      want,
    );
  });

  it("a history page's first message is paired by the message before the page", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "q" });
    const [a] = await s.append({ role: "assistant", content: "a" });
    const [q2] = await s.append({ role: "user", content: "q2" });
    await s.recordToolCall({ tool: "t", args: {}, result: 1 });
    const [a2] = await s.append({ role: "assistant", content: "a2" });
    // Another answer to q2 after a fork right after it (a truncating save's shape).
    const other = await s.append({ role: "assistant", content: "a2, again" }, { after: q2!.id });
    const page = await s.history({ branchId: a2!.branchId, limit: 1, withVersions: true });
    expect(page.map((m) => [m.content, m.versions.index, m.versions.count])).toEqual([["a2", 0, 2]]);
    const page2 = await s.history({ branchId: other[0]!.branchId, limit: 2, before: other[0]!.position + 1, withVersions: true });
    expect(page2.map((m) => [m.content, m.versions.index, m.versions.count])).toEqual([
      ["q2", 0, 1],
      ["a2, again", 1, 2],
    ]);
    expect((await s.versions(a!.id)).count).toBe(1);
  });

  it("a chat saved with saveChat: a regenerated answer whose loop called tools is < 2/2 >, in versions and the CLI", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const q = { id: "q1", role: "user" as const, parts: [{ type: "text" as const, text: "weather?" }] };
    await saveChat(s, [q]);
    await s.recordToolCall({ tool: "weather", args: {}, result: "sun" });
    await saveChat(s, [q, { id: "a1", role: "assistant", parts: [{ type: "text", text: "Sunny" }] }]);
    // Regenerate: the request carries the question only; the save before the loop forks right after it.
    await saveChat(s, [q]);
    await s.recordToolCall({ tool: "weather", args: { fresh: true }, result: "rain" });
    await s.recordToolCall({ tool: "radar", args: {}, result: "clouds" });
    await saveChat(s, [q, { id: "a2", role: "assistant", parts: [{ type: "text", text: "Rain later" }] }]);
    expect((await loadChat(s)).map((m) => m.id)).toEqual(["q1", "a2"]);
    const answer = (await s.history()).at(-1)!;
    const v = await s.versions(answer.id);
    expect([v.index + 1, v.count]).toEqual([2, 2]);
    if (!onPostgres) {
      const ran = await runInProcess(["versions", s.id, answer.id, "-u", "alice", "--db", path]);
      expect(ran.status, ran.stderr).toBe(0);
      expect(ran.stdout).toMatch(/^< 2\/2 >\n/);
    }
  });
});
