// Telling whether the process (and thread) that journaled a move still runs: a pid alone can be reused by an
// unrelated process after a crash, so where Linux's /proc tells, a process is also identified by its boot and start
// time; worker threads of one process share its pid, so the thread id is recorded too.
import { readFileSync } from "node:fs";
import { threadId } from "node:worker_threads";

interface ProcStat {
  /** "<boot id>:<start time in clock ticks since boot>" */
  start: string;
  /** One-letter state: "Z" (zombie) and "X" (dead) have exited. */
  state: string;
}

function procStat(pid: number): ProcStat | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 2 (the command name) may hold spaces and parentheses: count fields after its closing parenthesis.
    // The remaining fields start at field 3 (state); field 22 (starttime) is the 20th of them.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    return fields[19] ? { start: `${boot}:${fields[19]}`, state: fields[0] ?? "" } : null;
  } catch {
    return null;
  }
}

/** "<boot id>:<start time>" of a process, or null where /proc cannot tell (not Linux). */
export function processStart(pid: number): string | null {
  return procStat(pid)?.start ?? null;
}

/** This process's "<boot id>:<start time>" ("" where /proc cannot tell). */
const SELF_PROCESS = processStart(process.pid) ?? "";

/** This thread's identity, recorded with each move it journals: "<boot id>:<start time>#<thread id>". */
export const SELF_START = `${SELF_PROCESS}#${threadId}`;

/**
 * True when the thread that recorded (`pid`, `start`) may still run. This thread counts as dead (its running moves
 * are tracked in memory); another thread of this process counts as alive. Without a recorded start, or where /proc
 * cannot tell, any live pid counts. Processes in other pid namespaces (containers sharing the file) are not told apart.
 */
export function isAlive(pid: number, start: string | null): boolean {
  const [processPart = null, thread = null] = start === null ? [] : start.split("#");
  if (pid === process.pid) {
    if (start === null || start === SELF_START) return false;
    // Same pid, same process start, another thread: a live worker. Another start: an earlier process with our pid.
    return processPart === SELF_PROCESS && thread !== String(threadId);
  }
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const now = procStat(pid);
  if (now === null) return true;
  if (now.state === "Z" || now.state === "X") return false;
  return !processPart || now.start === processPart;
}
