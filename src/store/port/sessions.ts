// Sessions, their events, the operator listings, and the marks a session carries (imported calls).
import type { MessageRow } from "./entries.js";
import type { Step } from "./unit.js";

export interface SessionRow {
  seq: number;
  id: string;
  userId: string;
  title: string | null;
  metadata: string | null;
  currentBranchId: string;
  originSessionId: string | null;
  originCheckpointId: string | null;
  hasTools: boolean;
  hasWorkspace: boolean;
  /** The retention policy's JSON text (null: none). */
  retention: string | null;
  /** Retention has weighed checkpoints up to this seq against `keepFor`. */
  retentionAgedAt: number;
  createdAt: number;
  updatedAt: number;
  /**
   * The time of the session's newest checkpoint (0: none), where the read of the session gives it in the same statement (`currentOf`): a new checkpoint's time
   * is never before it, so the timeline's checkpoints stay in time order along seq.
   */
  lastCheckpointAt?: number;
  /**
   * Whether a move of the session is journaled and unfinished (running, or stopped midway), where the read of the
   * session gives it in the same statement (`currentOf`): a write on the current branch waits for it or resumes it.
   */
  moving?: boolean;
}

export type NewSession = Omit<SessionRow, "seq" | "hasTools" | "hasWorkspace" | "retention" | "retentionAgedAt">;

/** A session as listings read it: with its current lineage's last message and message count, from the same statement. */
export interface ListedSessionRow extends SessionRow {
  /** The last message of the current branch's lineage (undefined: it has none). */
  lastMessage: MessageRow | undefined;
  /** Messages of that lineage: the last message's running count (0 without one). */
  messageCount: number;
}

/** A listing statement's row: the session's columns, then its last message's (all null without one) and the count. */
export type ListedColumns = Record<string, unknown> & {
  lastId: string | null;
  lastBranchId: string;
  lastPosition: number;
  lastRole: string;
  lastContent: string;
  lastClientId: string | null;
  lastMetadata: string | null;
  lastCreatedAt: number;
  messageCount: number | null;
};

/** A listing row as the port's `ListedSessionRow`; `toSession` reads the session's own columns as the driver stores them. */
export function listedSessionFrom(row: ListedColumns, toSession: (columns: Record<string, unknown>) => SessionRow): ListedSessionRow {
  const { lastId, lastBranchId, lastPosition, lastRole, lastContent, lastClientId, lastMetadata, lastCreatedAt, messageCount, ...session } =
    row;
  const lastMessage: MessageRow | undefined =
    lastId === null
      ? undefined
      : {
          id: lastId,
          branchId: lastBranchId,
          position: lastPosition,
          role: lastRole,
          content: lastContent,
          clientId: lastClientId,
          metadata: lastMetadata,
          createdAt: lastCreatedAt,
        };
  return { ...toSession(session), lastMessage, messageCount: messageCount ?? 0 };
}

/** A user as the operator listing shows one. */
export interface UserRow {
  userId: string;
  sessions: number;
  updatedAt: number;
}

export interface EventRow {
  seq: number;
  sessionId: string;
  kind: string;
  refId: string;
  branchId: string;
  detail: string | null;
  createdAt: number;
}

/** A timeline row: an entry, a checkpoint, a branch or an event. */
export interface TimelineRow {
  source: "entry" | "event";
  kind: string;
  refId: string;
  branchId: string;
  detail: string | null;
  createdAt: number;
  seq: number;
}

/** Where a timeline page starts: below this row's sort key. */
export interface TimelineKey {
  createdAt: number;
  seq: number;
  source: string;
}

export interface SessionsTx {
  insertSession(row: NewSession): Step<void>;
  /** The session row; `updatedAt` is the time of its last move (cheap: for ownership checks). */
  getSession(id: string): Step<SessionRow | undefined>;
  /** The session row with `updatedAt` also counting the current branch's last entry (what `info()` shows). */
  getSessionInfo(id: string): Step<SessionRow | undefined>;
  /** A user's sessions, newest first, below `beforeSeq`, each with its current lineage's last message (one statement). */
  listSessions(userId: string, beforeSeq: number | undefined, limit: number): Step<ListedSessionRow[]>;
  /** How many sessions the user owns. */
  countUserSessions(userId: string): Step<number>;
  /** Ids and seqs of a user's sessions, newest first, below `beforeSeq` (what `deleteUser` walks, a batch at a time). */
  userSessionIds(userId: string, beforeSeq: number | undefined, limit: number): Step<{ id: string; seq: number }[]>;
  /**
   * Makes the branch current. With `top`, the move that made it (recorded on it, see `insertBranch`) also becomes the
   * newest on the session's move stack, leaving nothing to redo: what `recordMove` does, in the same write (and
   * `keepUndone` as there).
   */
  setCurrentBranch(sessionId: string, branchId: string, at: number, top?: string, keepUndone?: boolean): Step<void>;
  /** Sets the title and metadata given (undefined: left as it is) and `updatedAt`. */
  updateSession(sessionId: string, fields: { title?: string | null; metadata?: string | null }, at: number): Step<void>;
  /** Records that the session has tool calls (once). */
  markHasTools(sessionId: string): Step<void>;
  /** Ids of every session, in creation order. */
  allSessionIds(): Step<string[]>;
  /**
   * Deletes a session and everything it recorded (branches, entries, checkpoints, tool results, journals, events, its
   * workspace record and LangGraph rows). Shared state documents and file contents are left to `prune`.
   */
  deleteSession(sessionId: string): Step<void>;

  /**
   * Inserts an event; its time is raised to the session's newest event's when the clock went back (the timeline walks
   * events by seq), unless `asRecorded` (an import keeps a document's times exactly).
   */
  insertEvent(row: Omit<EventRow, "seq">, how?: { asRecorded?: boolean }): Step<void>;
  /** The session's events (not entries), in the order they happened. */
  sessionEvents(sessionId: string): Step<EventRow[]>;
  /**
   * Entries, checkpoints, branches and events of a session, newest first, below `before`. A session with its times in
   * order (every one written since `timesOrdered`) is read along the positions and seqs its streams are indexed by.
   * Checkpoints expired at `now` are left out, as every other read of checkpoints leaves them out.
   */
  timeline(userId: string, sessionId: string, before: TimelineKey | undefined, limit: number, now: number): Step<TimelineRow[]>;

  /** Records that some of the session's times go back along its streams (an imported document's): its timeline sorts. */
  markTimesUnordered(sessionId: string): Step<void>;

  /** Sets (or, with null, clears) the session's retention policy and where its `keepFor` weighing stands. */
  setRetention(sessionId: string, retention: string | null, agedAt: number): Step<void>;
  /** Ids of the sessions (one, or all) with a retention policy, in creation order. */
  sessionsWithRetention(sessionId?: string): Step<string[]>;

  /**
   * The first of these ids the database holds (a session's before a branch's, before an entry's, before a checkpoint's),
   * or undefined: an import keeps ids, so one taken refuses the document. One look-up for them all.
   */
  takenId(ids: { sessions: string[]; branches: string[]; entries: string[]; checkpoints: string[] }): Step<string | undefined>;
  /** Records that a tool call came in through `importSession` (never replayed here). */
  insertImportedCall(entryId: string, sessionId: string): Step<void>;
  /** The session's imported tool calls. */
  importedCalls(sessionId: string): Step<Set<string>>;

  /** Every user's sessions, newest first (an operator listing, not scoped to a user), as `listSessions` reads them. */
  listAllSessions(beforeSeq: number | undefined, limit: number): Step<ListedSessionRow[]>;
  /** The users that own sessions, by id after `afterUserId`, with how many sessions and when one was last updated. */
  listUsers(afterUserId: string | undefined, limit: number): Step<UserRow[]>;
}
