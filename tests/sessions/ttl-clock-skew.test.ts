// A checkpoint's TTL counts from its createdAt, which follows the session's newest checkpoint when this server's clock
// is behind another's: a TTL is never shortened (nor a checkpoint born expired) by a clock that lags.
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { Checkpoint } from "../../src/index.js";
import { nodeArgs } from "../fixtures/compiled.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const MINUTE = 60_000;

/** Writes a checkpoint from another process whose clock is `aheadMs` off (tests/fixtures/clock-ahead.ts). */
async function skewedCheckpoint(aheadMs: number, args: string[]): Promise<{ id: string; createdAt: number; expiresAt: number | null }> {
  const script = path.join(repoRoot, "tests/fixtures/skewed-checkpoint.ts");
  const proc = spawn(process.execPath, [...nodeArgs(script, ["tests/fixtures/clock-ahead.ts"]), ...args], {
    cwd: repoRoot,
    env: { ...process.env, CLOCK_AHEAD_MS: String(aheadMs) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => proc.on("exit", resolve));
  expect(code, err).toBe(0);
  return JSON.parse(out) as { id: string; createdAt: number; expiresAt: number | null };
}

const lifetime = (c: Checkpoint) => c.expiresAt!.getTime() - c.createdAt.getTime();

describe("a checkpoint's TTL under clock skew", () => {
  it("counts from createdAt when another server's clock ran ahead: checkpoint, turn and edit stay live for their TTL", async () => {
    const { fp, path: file } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const [question] = await s.append({ role: "user", content: "q" });
    // A server two minutes ahead writes a checkpoint: this server's next ones are stamped no earlier than it.
    const ahead = await skewedCheckpoint(2 * MINUTE, [file, s.id, "u"]);
    const made = [
      await s.checkpoint({ name: "ttl", expiresIn: "1m" }),
      (await s.turn({ role: "assistant", content: "a" }, { name: "turn-ttl", expiresIn: "1m" })).checkpoint,
      (await s.edit(question!.id, { content: "q2" }, { checkpoint: { name: "edit-ttl", expiresIn: "1m" } })).checkpoint!,
    ];
    for (const c of made) {
      expect(c.createdAt.getTime()).toBeGreaterThanOrEqual(ahead.createdAt);
      expect(lifetime(c), c.name!).toBe(MINUTE);
    }
    const listed = (await fp.listCheckpoints({ userId: "u" })).items.map((c) => c.name);
    expect(listed).toEqual(expect.arrayContaining(["ttl", "turn-ttl", "edit-ttl", "skewed"]));
  });

  it("a server whose clock is behind makes a TTL checkpoint that lives its TTL past its createdAt", async () => {
    const { fp, path: file } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "q" });
    await s.checkpoint({ name: "now" });
    const behind = await skewedCheckpoint(-2 * MINUTE, [file, s.id, "u", "1m"]);
    expect(behind.expiresAt! - behind.createdAt).toBe(MINUTE);
    expect((await fp.listCheckpoints({ userId: "u" })).items.map((c) => c.id)).toContain(behind.id);
  });
});
