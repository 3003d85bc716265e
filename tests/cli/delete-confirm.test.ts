// `forkpoint delete` asks on a terminal what it is about to delete (y deletes; anything else, or end of input, keeps
// it); `--yes` skips the question, and a script (standard input not a terminal) is never asked.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { installCli, runInTerminal, type Installed } from "./binary.js";
import { runInProcess } from "./in-process.js";

let cli: Installed;
let made = 0;

/** A fresh database holding one session of ann's ("Trip": two messages, two branches, two named checkpoints). */
async function database(): Promise<{ db: string; sessionId: string; checkpointId: string }> {
  const db = join(cli.dir, `delete-${made++}.db`);
  const fp = openForkpoint({ path: db });
  const s = await fp.createSession({ userId: "ann", title: "Trip" });
  await s.append([
    { role: "user", content: "Lisbon?" },
    { role: "assistant", content: "Yes." },
  ]);
  const cp = await s.checkpoint({ name: "booked" });
  await s.append({ role: "user", content: "Porto instead?" });
  await s.rollback(cp.id);
  // "booked" is a fork point now: "draft" is one a user may delete.
  const draft = await s.checkpoint({ name: "draft" });
  await fp.close();
  return { db, sessionId: s.id, checkpointId: draft.id };
}

async function sessionsOf(db: string): Promise<string[]> {
  const fp = openForkpoint({ path: db, readonly: true });
  try {
    return (await fp.listSessions({ userId: "ann" })).items.map((i) => i.id);
  } finally {
    await fp.close();
  }
}

beforeAll(async () => {
  cli = await installCli();
});
afterAll(() => cli.remove());

describe("forkpoint delete on a terminal", () => {
  it("asks what it is about to delete, and deletes only on y", async () => {
    const { db, sessionId } = await database();
    const no = runInTerminal([process.execPath, cli.bin, "--db", db, "delete", sessionId, "-u", "ann"], {}, "n\n");
    expect(no.status).toBe(1);
    expect(no.output).toContain(
      `delete session ${sessionId} "Trip" of ann (2 messages, 2 branches, 2 checkpoints) and everything it recorded? [y/N]`,
    );
    expect(no.output).toContain("not deleted (answer y to delete, or pass --yes)");
    expect(await sessionsOf(db)).toEqual([sessionId]);

    // End of input (Ctrl-D) is no answer: nothing is deleted.
    const eof = runInTerminal([process.execPath, cli.bin, "--db", db, "delete", sessionId, "-u", "ann"]);
    expect([eof.status, eof.output]).toEqual([1, expect.stringContaining("not deleted")]);
    expect(await sessionsOf(db)).toEqual([sessionId]);

    const yes = runInTerminal([process.execPath, cli.bin, "--db", db, "delete", sessionId, "-u", "ann"], {}, "Yes\n");
    expect(yes.status).toBe(0);
    expect(yes.output).toContain(`deleted session ${sessionId}`);
    expect(await sessionsOf(db)).toEqual([]);
  });

  it("asks before deleting a checkpoint too, naming it", async () => {
    const { db, sessionId, checkpointId } = await database();
    const r = runInTerminal([process.execPath, cli.bin, "--db", db, "delete", sessionId, checkpointId, "-u", "ann"], {}, "y\n");
    expect(r.status).toBe(0);
    expect(r.output).toContain(`delete checkpoint ${checkpointId} "draft" of session ${sessionId}? [y/N]`);
    expect(r.output).toContain(`deleted checkpoint ${checkpointId} of session ${sessionId}`);
  });

  it("--yes deletes without asking; an unknown session is not found, without a question", async () => {
    const { db, sessionId } = await database();
    const missing = runInTerminal([process.execPath, cli.bin, "--db", db, "delete", "ses_nope", "-u", "ann"], {}, "y\n");
    expect([missing.status, missing.output]).toEqual([1, expect.stringContaining("error NOT_FOUND")]);
    expect(missing.output).not.toContain("[y/N]");
    const r = runInTerminal([process.execPath, cli.bin, "--db", db, "delete", sessionId, "-u", "ann", "--yes"]);
    expect(r.status).toBe(0);
    expect(r.output).not.toContain("[y/N]");
    expect(await sessionsOf(db)).toEqual([]);
  });
});

describe("forkpoint delete from a script", () => {
  it("is never asked: standard input is not a terminal", async () => {
    const { db, sessionId } = await database();
    const r = await runInProcess(["--db", db, "delete", sessionId, "-u", "ann"], { input: "n\n" });
    expect([r.status, r.stdout, r.stderr]).toEqual([0, `deleted session ${sessionId} (run prune to reclaim its space)\n`, ""]);
    expect(await sessionsOf(db)).toEqual([]);
  });
});
