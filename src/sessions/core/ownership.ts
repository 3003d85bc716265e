// Who runs a journaled move or a running tool call: on one host a live process (pid and start time), on a shared
// database a renewable lease.
import { randomBytes } from "node:crypto";
import type { CallOwnerRow, Owner, StoreCapabilities } from "../../store/port/index.js";
import { isAlive, SELF_START } from "./process-identity.js";

/** An owner as read back with what it owns: on lease stores, whether its lease held then. */
export type OwnerRow = Owner & { leaseHeld: boolean | null };

export interface MoveOwnership {
  /** This thread, as the journals it starts or takes over record it. */
  readonly self: Owner;
  /**
   * How long a lease lasts (ms) before another owner may take the move over, or move the session under the call; null
   * where owners are processes. The store times it by its own clock (the database server's), never this process's.
   */
  readonly leaseMs: number | null;
  /** Whether the owner recorded on a running move or call may still be running it. */
  mayRun(row: OwnerRow): boolean;
}

const SELF: Owner = { pid: process.pid, pidStart: SELF_START };

/** Processes on this host (SQLite): a process that still runs owns its moves; a dead one's are taken over. */
const processOwnership: MoveOwnership = { self: SELF, leaseMs: null, mayRun: (row) => isAlive(row.pid, row.pidStart) };

/**
 * This thread as a lease holder: its process identity and a random tag. Servers on other hosts can look alike (a
 * container's node is pid 1 in each, a host without /proc records no start time): the tag keeps one's moves and calls
 * from passing for another's, so a stalled server whose move was taken over is fenced out of it.
 */
const LEASE_SELF: Owner = { pid: process.pid, pidStart: `${SELF_START}#${randomBytes(8).toString("hex")}` };

/**
 * Leases (a database several hosts share): a move whose lease ran out, by the store's clock, is taken over, whoever held
 * it. This thread's own that is not in flight (callers ask the in-flight sets first) was left by a unit that failed (a
 * lost connection): nothing runs it, whatever its lease says, as the process check counts this thread dead.
 */
function leaseOwnership(leaseMs: number): MoveOwnership {
  const mine = (row: OwnerRow) => row.pid === LEASE_SELF.pid && row.pidStart === LEASE_SELF.pidStart;
  return { self: LEASE_SELF, leaseMs, mayRun: (row) => row.leaseHeld === true && !mine(row) };
}

/** The ownership a store's capabilities call for. */
export function ownershipFor(capabilities: StoreCapabilities, leaseMs = 30_000): MoveOwnership {
  return capabilities.ownership === "lease" ? leaseOwnership(leaseMs) : processOwnership;
}

/**
 * Invocations whose handler is running in this process now (any handle): the process check counts this thread as
 * dead, so its own calls are known from here.
 */
export const inflightInvocations = new Set<string>();

/** Moves currently executing in this process (recovery must not resume them). */
export const inflightMoves = new Set<string>();

/**
 * Moves of this process whose step's handler a `close()` stopped waiting for, while that handler still runs: another
 * handle's writes wait for them as for another process's (a late undo would land over what they wrote); an explicit
 * `recover()` takes them over, as after a crash.
 */
export const abandonedMoves = new Set<string>();

/**
 * Whether a running move may still be changing the session's world somewhere: executing in this process, or owned by
 * another process or server that may still run it (not one of this process's own that stopped: that one is resumed).
 */
export function moveMayRun(ownership: MoveOwnership, move: OwnerRow & { id: string }): boolean {
  if (inflightMoves.has(move.id) || abandonedMoves.has(move.id)) return true;
  const own = move.pid === ownership.self.pid && move.pidStart === ownership.self.pidStart;
  return !own && ownership.mayRun(move);
}

/** Whether a running call's owner may still be running it: a live call, which no move may go under. */
export function callMayRun(ownership: MoveOwnership, row: CallOwnerRow): boolean {
  return inflightInvocations.has(row.entryId) || ownership.mayRun(row);
}
