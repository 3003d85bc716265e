// Telling whether the process that journaled a move still runs: a pid alone can be reused by an unrelated process
// after a crash, so where Linux's /proc tells, a process is also identified by its boot and start time.
import { readFileSync } from "node:fs";

/** "<boot id>:<start time in clock ticks since boot>" of a process, or null where /proc cannot tell (not Linux). */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 2 (the command name) may hold spaces and parentheses: count fields after its closing parenthesis.
    // The remaining fields start at field 3 (state); field 22 (starttime) is the 20th of them.
    const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
    const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    return start ? `${boot}:${start}` : null;
  } catch {
    return null;
  }
}

/** This process's identity, recorded with each move it journals. */
export const SELF_START = processStart(process.pid);

/**
 * True when the process that recorded (`pid`, `start`) still runs. This process counts as dead (its own running
 * moves are tracked in memory). Without a recorded start, or where /proc cannot tell, any live pid counts.
 */
export function isAlive(pid: number, start: string | null): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (start === null) return true;
  const now = processStart(pid);
  return now === null || now === start;
}
