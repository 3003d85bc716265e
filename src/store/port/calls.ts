// Who runs each tool call `invoke` journaled while it runs (a process, or on shared databases a renewable lease), and
// which workspace paths each call changed.
import type { Owner } from "./moves.js";
import type { Step } from "./unit.js";

/** A running call's owner as read back, with the call's session and tool. */
export interface CallOwnerRow extends Owner {
  entryId: string;
  sessionId: string;
  tool: string;
  /** Lease stores: whether the owner's lease still held when read, by the store's clock; null on process-owned stores. */
  leaseHeld: boolean | null;
}

/** What may be changing a session's world now: its running moves (by id and owner) and its running calls' owners. */
export interface SessionActivity {
  /** Its running moves; `leaseHeld` as `MoveRow`'s (null where owners are processes). */
  moves: (Owner & { id: string; leaseHeld: boolean | null })[];
  calls: CallOwnerRow[];
}

/** A call and where it sits (its branch and position). */
export interface CallPlace {
  id: string;
  branchId: string;
  position: number;
}

/**
 * What a call's run left in the paths it changed, as forkpoint made them known: a path's file id, or null where it
 * deleted the file. A path whose content stayed drift (a hand edit forkpoint did not know was there before) is not in it.
 * A run that changed no file: what it found at the paths its arguments name (null: no file) and the files under them.
 */
export type CallOutputs = ReadonlyMap<string, string | null>;

/**
 * A path that held a hand edit as a call began: the file id its run found there (the hand edit, which the call's undo
 * puts back) and the one it left there (what the call wrote); null: no file.
 */
export interface HandEditIds {
  found: string | null;
  left: string | null;
}

/** What is known of a call's changed paths as it is recorded: its outputs, and those that held a hand edit before it. */
export interface CallRecord {
  outputs?: CallOutputs;
  handEdited?: readonly string[];
  /** For paths of `handEdited`: what the run found and left there (a move tells the call's own output from a later save). */
  handEditIds?: ReadonlyMap<string, HandEditIds>;
}

export interface CallsTx {
  /** Records who runs a call journaled in this unit; on lease stores it holds the call for `leaseMs` from now. */
  insertCallOwner(entryId: string, sessionId: string, owner: Owner, leaseMs: number | null): Step<void>;
  /**
   * Extends the lease on a call `owner` runs to `leaseMs` from now: false when the call has no such owner any more (it
   * completed, or its session was deleted).
   */
  renewCall(entryId: string, owner: Owner, leaseMs: number): Step<boolean>;
  /** Forgets a call's owner: the call completed. */
  deleteCallOwner(entryId: string): Step<void>;
  /** The owners of running calls, of one session or of all, oldest call first. */
  callOwners(sessionId?: string): Step<CallOwnerRow[]>;
  /** A session's running moves (oldest first) and running calls' owners (oldest call first), read together. */
  activity(sessionId: string): Step<SessionActivity>;

  /**
   * Records the workspace paths call `entryId` of `sessionId` changed while it ran (relative to the workspace; none:
   * it changed no file), with what `recorded` knows of them, replacing any record of it.
   * Deleted with its session; never exported, imported or cloned.
   */
  putCallPaths(entryId: string, sessionId: string, paths: readonly string[], recorded?: CallRecord): Step<void>;
  /** The workspace paths call `entryId` changed while it ran, sorted; undefined when none were recorded. */
  callPaths(entryId: string): Step<string[] | undefined>;
  /** What call `entryId`'s run left in the paths it changed (see `CallOutputs`); undefined when not recorded. */
  callOutputs(entryId: string): Step<CallOutputs | undefined>;
  /**
   * Those of them `putCallPaths` was given as `handEdited`: changed by hand before the call ran, in content forkpoint
   * never saw (its undo puts that back: drift, not forkpoint's own doing). Sorted; empty when none or not recorded.
   */
  callHandEdited(entryId: string): Step<string[]>;
  /**
   * What call `entryId`'s run found and left in those of them `putCallPaths` was given with `handEditIds`; empty when
   * none or not recorded (rows written before it was kept).
   */
  callHandEditIds(entryId: string): Step<Map<string, HandEditIds>>;
  /**
   * Records, for call `entryId` recorded with `recordToolCall` (its completion written), what the files held at the paths
   * its arguments name and under them as it was recorded (see `CallOutputs`); an empty map records nothing.
   */
  putRecordedFiles(entryId: string, files: CallOutputs): Step<void>;
  /** What `putRecordedFiles` recorded for call `entryId`; undefined when nothing was (no workspace, an older row). */
  recordedFiles(entryId: string): Step<CallOutputs | undefined>;
  /** The session's calls recorded as having changed at least one workspace path, where they sit, oldest first. */
  pathChangingCalls(sessionId: string): Step<CallPlace[]>;
  /**
   * The session's calls recorded as having changed no workspace path (whatever effect they have lies outside the files
   * a snapshot captures, unless their tool says its effects lie only in the files), oldest first, with their tool's name.
   */
  pathlessCalls(sessionId: string): Step<{ id: string; tool: string | null }[]>;
}
