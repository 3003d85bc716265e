// Which journaling process or thread recovery takes for alive: pids reused by another process, earlier processes
// with this pid, other worker threads of this process, and zombies.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { threadId } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { SELF_START, isAlive, processStart } from "../../src/sessions/core/process-identity.js";

const linux = processStart(process.pid) !== null;
const kids: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const k of kids.splice(0)) if (k.exitCode === null) k.kill("SIGKILL");
});

async function sleeper() {
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"], { stdio: "ignore" });
  kids.push(child);
  await new Promise((r) => child.once("spawn", r));
  return child;
}

describe("isAlive", () => {
  it("this thread counts as dead (its own moves are tracked in memory), another thread of this process as alive", () => {
    expect(isAlive(process.pid, SELF_START)).toBe(false);
    expect(isAlive(process.pid, null)).toBe(false);
    const otherThread = SELF_START.replace(/#\d+$/, `#${threadId + 1}`);
    expect(isAlive(process.pid, otherThread)).toBe(true);
  });

  it.skipIf(!linux)("an earlier process that had this pid counts as dead", () => {
    expect(isAlive(process.pid, "another-boot:1#0")).toBe(false);
  });

  it("a live process counts as alive, a finished one as dead", async () => {
    const child = await sleeper();
    const start = processStart(child.pid!);
    expect(isAlive(child.pid!, start === null ? null : `${start}#0`)).toBe(true);
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    expect(isAlive(child.pid!, null)).toBe(false);
  });

  it.skipIf(!linux)("a live pid with another start time is a reused pid: dead", async () => {
    const child = await sleeper();
    expect(isAlive(child.pid!, `${processStart(child.pid!)!.split(":")[0]}:1#0`)).toBe(false);
  });

  it.skipIf(!linux)("a zombie (exited, not yet reaped) counts as dead", async () => {
    // The child's own child exits once the child has become `sleep` (a shell might reap it before its exec); `sleep`
    // never waits for it, so it stays a zombie while the child sleeps.
    const parent = spawn("sh", ["-c", "sleep 0.3 & echo $!; exec sleep 30"], { stdio: ["ignore", "pipe", "ignore"] });
    kids.push(parent);
    const pid = Number(await new Promise<string>((r) => parent.stdout!.once("data", (d: Buffer) => r(d.toString().trim()))));
    for (let i = 0; i < 500 && processStart(pid) !== null && !isZombie(pid); i++) await new Promise((r) => setTimeout(r, 10));
    expect(isZombie(pid)).toBe(true);
    expect(isAlive(pid, `${processStart(pid)}#0`)).toBe(false);
  });
});

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}
