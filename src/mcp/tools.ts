// The MCP tools over one session with a workspace: each takes its parsed input and returns JSON and a line to read.
import {
  ConflictError,
  ForkpointError,
  ValidationError,
  type Branch,
  type Checkpoint,
  type MoveOptions,
  type MovePlan,
  type MoveResult,
  type SessionHandle,
} from "../index.js";
import type { FilesDiffer } from "./files-diff.js";
import { finishStopped, keptByRollback, refusedForNow, rollbackCheck } from "./blocked.js";
import { findCheckpoint, lastCheckpoint } from "./lineage.js";
import { changedLine } from "./changed-line.js";
import { attachedWorkspace } from "./workspace-session.js";
import type { ToolInput, ToolName, ToolOutput } from "./schemas.js";
import { branchOf, callOf, checkpointOf, countOf, diffLine, moveOf, moveTail, named, paths, skippedTail, where } from "./shapes.js";

/** A tool's answer: its structured content, the line a model reads, and (for a diff) the patch as a second text. */
export interface ToolAnswer<T extends ToolName> {
  structured: ToolOutput<T>;
  line: string;
  more?: string;
}

/** What the tools work on: the session, and where its files are compared (off the server's thread). */
export interface ToolContext {
  session: SessionHandle;
  files: FilesDiffer;
}

export type ToolHandlers = { [T in ToolName]: (t: ToolContext, input: ToolInput<T>) => Promise<ToolAnswer<T>> };

/** A patch longer than this is cut (the file lists stay whole): a model's context is not the place for a vendored tree. */
export const MAX_PATCH_CHARS = 60_000;

/**
 * Every move of an MCP session moves the files and the conversation together, and never passes an irreversible tool
 * call silently (a person can, with the CLI).
 */
const MOVE: MoveOptions = { scope: "both", refuseIrreversible: true };

/**
 * A rollback, and the branch it started from: made only while the session is still on the branch read first, so that
 * another client's move in between (through this server or another) is read again, and a rollback that finds the
 * session where it goes says so instead of claiming a move.
 */
async function rollbackFrom(s: SessionHandle, checkpointId: string, force: boolean): Promise<{ before: string; moved: MoveResult }> {
  for (let attempt = 0; ; attempt++) {
    const before = (await s.info()).currentBranchId;
    try {
      return { before, moved: await s.rollback(checkpointId, { ...MOVE, ...(force ? { force } : {}), ifAt: { branchId: before } }) };
    } catch (error) {
      if (attempt < 10 && error instanceof ConflictError && error.code === "SESSION_MOVED") continue;
      throw error;
    }
  }
}

/** The plan of the "both" rollback to `checkpointId`, or null when it cannot be made now (the rollback says why). */
async function bothPlan(s: SessionHandle, checkpointId: string): Promise<MovePlan | null> {
  try {
    return await s.plan({ checkpointId, scope: "both" });
  } catch (error) {
    if (error instanceof ForkpointError) return null;
    throw error;
  }
}

/** The target `diff` takes and answers for the files on disk. */
const DISK = "disk";

export const handlers: ToolHandlers = {
  async checkpoint({ session: s }, { name }) {
    // A checkpoint without a workspace captures no files: never answered as saved (the server attaches one when it
    // starts; a session deleted and imported again under its id while it runs has none). A deleted one says so first.
    if (!(await attachedWorkspace(s))) {
      await s.info();
      throw new ValidationError(
        "workspace",
        "this server's session has no workspace attached, so a checkpoint would capture no files: restart this MCP server, which attaches it",
      );
    }
    const saved = await s.checkpoint(name === undefined ? {} : { name });
    const cp = checkpointOf(saved);
    const skipped = saved.skipped ?? [];
    return {
      structured: { checkpoint: cp, skipped },
      line: `Saved checkpoint ${named(cp)} (position ${cp.position} on branch ${cp.branchId})${skippedTail(skipped)}.`,
    };
  },

  async list_checkpoints({ session: s }, { limit, cursor }) {
    const page = await s.listCheckpoints({ limit: limit ?? 20, cursor: cursor ?? null });
    // A deleted session lists no checkpoints: refused as every other tool refuses it (restart the server).
    if (page.items.length === 0) await s.info();
    const checkpoints = page.items.map(checkpointOf);
    const listed = checkpoints.map((c) => `${named(c)} (${c.createdAt})`).join(", ");
    const more = page.nextCursor ? `; more with cursor ${JSON.stringify(page.nextCursor)}` : "";
    const line =
      checkpoints.length === 0
        ? "No checkpoints yet: checkpoint {} saves one."
        : `${countOf(checkpoints.length, "checkpoint")}, newest first: ${listed}${more}.`;
    return { structured: { checkpoints, nextCursor: page.nextCursor }, line };
  },

  async diff({ session: s, files }, { from, to }) {
    const a = await findCheckpoint(s, from);
    // "disk" is what the results call the files on disk: accepted as `to` too.
    const b = to === undefined || to === DISK ? null : await findCheckpoint(s, to);
    const [d] = await files.changes(s, [{ from: a.id, to: b ? b.id : DISK }], MAX_PATCH_CHARS);
    const structured = { from: a.id, to: b ? b.id : DISK, ...d! };
    return { structured, line: diffLine(structured), ...(structured.patch ? { more: structured.patch } : {}) };
  },

  async plan_rollback({ session: s, files }, { checkpoint, scope }) {
    const cp = await findCheckpoint(s, checkpoint);
    // Once, before the reads below that run at once: a move that stopped midway and runs nowhere is finished first, as
    // the rollback would finish it, so that all of them are of the session the rollback starts from.
    await finishStopped(s);
    const [plan, both, last, check, held, forNow] = await Promise.all([
      // Absent, the scope is plan's own default.
      s.plan(scope === undefined ? { checkpointId: cp.id } : { checkpointId: cp.id, scope }),
      // The "both" move rollback makes, whatever the scope planned: the files it keeps, and what refuses it even forced.
      scope === "both" ? null : bothPlan(s, cp.id),
      lastCheckpoint(s),
      rollbackCheck(s, cp.id),
      keptByRollback(s, cp),
      refusedForNow(s),
    ]);
    const move = scope === "both" ? plan : both;
    // Something in the way of a file; else a hand edit one of its undos puts back that one of its replays writes over.
    const inTheWay = check?.blocked ?? null;
    // Work under way elsewhere refuses it first; the plan's `blocked` then says what, and anything else that stops it.
    const overHandEdit = inTheWay || forNow ? null : (move?.blocked ?? null);
    const blocked = inTheWay ?? overHandEdit;
    // File lists only (no patch is computed), both in one call: the checkpoint's files against the disk, and those of the
    // last checkpoint on this branch (once, when it is that checkpoint).
    const pairs = [{ from: cp.id, to: DISK }, ...(last && last.id !== cp.id ? [{ from: last.id, to: DISK }] : [])];
    const [toCheckpoint, sinceLast] = await files.changes(s, pairs, 0);
    const uncheckpointed = last ? (sinceLast ?? toCheckpoint!) : null;
    const changed = uncheckpointed ? [...uncheckpointed.added, ...uncheckpointed.modified, ...uncheckpointed.deleted].sort() : [];
    const irreversible = plan.skipped.map(callOf);
    const unregistered = (plan.unregistered ?? []).map(callOf);
    // The move's own drift check decides (a new file the target ignores is no drift); the file lists, when it could not run.
    const drifts = check ? check.drifted.length > 0 : changed.length > 0;
    // The refusal rollback gives first: the tool calls' (checked before any file is looked at), then the files'.
    const refusal = forNow
      ? forNow
      : unregistered.length > 0
        ? "TOOL_NOT_REGISTERED"
        : irreversible.length > 0
          ? "IRREVERSIBLE"
          : drifts || blocked
            ? "WORKSPACE_DRIFT"
            : null;
    // The files of an applied irreversible call the checkpoint does not hold, or of a call a crash left of unknown outcome,
    // stay as they are (rollback keeps them).
    const differs = [...toCheckpoint!.added, ...toCheckpoint!.modified, ...toCheckpoint!.deleted];
    const irreversibleKept = differs.filter((p) => held.includes(p)).sort();
    // A hand edit one of its undos puts back stays as it is too (the move's own files step leaves it).
    const handKept = (move?.files?.kept ?? []).filter((p) => !irreversibleKept.includes(p)).sort();
    const kept = [...irreversibleKept, ...handKept].sort();
    const moved = (p: string) => !kept.includes(p);
    // A file of the checkpoint the disk's list leaves out as ignored now is there already with its content (else the
    // check says what is in the way): the restore does not write it.
    const absent = (p: string) => !check || check.blocked !== null || check.written.includes(p);
    const structured = {
      checkpoint: checkpointOf(cp),
      restore: [...toCheckpoint!.modified, ...toCheckpoint!.deleted.filter(absent)].filter(moved).sort(),
      remove: toCheckpoint!.added.filter((p) => moved(p) && !check?.leftAlone.includes(p)),
      kept,
      uncheckpointed: changed,
      lastCheckpointId: last?.id ?? null,
      tools: { undo: plan.undone.map(callOf), replay: plan.replayed.map(callOf), irreversible, unregistered },
      refusal,
    };
    // Something in the way of the restore is said first: the file lists leave out what forkpoint does not capture.
    const parts = [
      ...(forNow ? [`Rollback to ${named(cp)} is refused (${forNow}) for now: ${plan.blocked ?? move?.blocked}`] : []),
      inTheWay
        ? `Rollback to ${named(cp)} is refused (WORKSPACE_DRIFT) even with force: true, until what is in the way is ` +
          `removed or moved: ${inTheWay}`
        : `Rollback to ${named(cp)} would write back ${countOf(structured.restore.length, "file")}` +
          (structured.restore.length > 0 ? ` (${paths(structured.restore)})` : "") +
          ` and delete ${structured.remove.length}` +
          (structured.remove.length > 0 ? ` (${paths(structured.remove)})` : ""),
    ];
    const keep = (list: string[]) => `keep ${countOf(list.length, "file")} as ${list.length === 1 ? "it is" : "they are"} (${paths(list)})`;
    if (irreversibleKept.length > 0)
      parts.push(`${keep(irreversibleKept)}: irreversible tool calls (or calls a crash left unknown) wrote them, and those stay applied`);
    if (handKept.length > 0)
      parts.push(
        `${keep(handKept)}: its undos put back changes made there by hand, which it leaves as they are ` +
          "(not checkpointed; checkpoint {} after it keeps them)",
      );
    // What a recorded call's undo puts back is its tool's own (a replayed call's, maybe a hand edit): no one can tell
    // before it runs.
    const mayKeep = (move?.files?.mayKeep ?? []).filter((p) => !kept.includes(p));
    if (mayKeep.length > 0)
      parts.push(
        `maybe keep ${paths(mayKeep)} as an undo puts ${mayKeep.length === 1 ? "it" : "them"} back (a call recorded with ` +
          "recordToolCall, or one a replay ran over a change made by hand), when no checkpoint holds that content",
      );
    if (move?.mayStop) parts.push(`it may stop partway, forced or not: ${move.mayStop}`);
    if (structured.tools.undo.length > 0) parts.push(`undo ${paths(structured.tools.undo)}`);
    if (structured.tools.replay.length > 0) parts.push(`replay ${paths(structured.tools.replay)}`);
    if (changed.length > 0) parts.push(changedLine(changed, check, drifts, blocked !== null));
    if (overHandEdit) parts.push(`refused (WORKSPACE_DRIFT) even with force: true: ${overHandEdit}`);
    if (unregistered.length > 0)
      parts.push(
        `refused (TOOL_NOT_REGISTERED): it would undo or replay ${paths(unregistered)}, whose tools this server has not loaded (start it with --tools MODULE)`,
      );
    if (irreversible.length > 0) parts.push(`refused (IRREVERSIBLE): it would pass ${paths(irreversible)}`);
    return { structured, line: `${parts.join("; ")}.` };
  },

  async rollback({ session: s }, { checkpoint, force }) {
    const cp = await findCheckpoint(s, checkpoint);
    const { before, moved } = await rollbackFrom(s, cp.id, force === true);
    const move = moveOf(moved);
    // A rollback to where the session already is forks no branch. It is a move of the undo history (a first undo
    // stays here) unless it repeats the last move: the line claims neither.
    const line =
      move.branch.id === before
        ? `Already at ${named(cp)} on ${where(move.branch)}: no branch made; ${moveTail(move)}.`
        : `Rolled back to ${named(cp)}: now on ${where(move.branch)}; ${moveTail(move)}. undo {} takes it back.`;
    return { structured: { checkpoint: checkpointOf(cp), ...move }, line };
  },

  async undo({ session: s }) {
    const move = moveOf(await s.undo(MOVE));
    return { structured: move, line: `Undone: back on ${where(move.branch)}; ${moveTail(move)}. redo {} goes forward again.` };
  },

  async redo({ session: s }) {
    const move = moveOf(await s.redo(MOVE));
    return { structured: move, line: `Redone: on ${where(move.branch)}; ${moveTail(move)}.` };
  },

  async branches({ session: s }) {
    const branches = (await s.branches()).map(branchOf);
    const current = branches.find((b) => b.current)!;
    const others = branches.filter((b) => !b.current).map((b) => `${b.id} (head ${b.head})`);
    const from = current.parentId ? `, forked from ${current.parentId} at ${current.forkPosition}` : "";
    const line =
      `${countOf(branches.length, "branch", "branches")}; current ${current.id} (head ${current.head}${from})` +
      (others.length > 0 ? `; others: ${paths(others, 10)}.` : ".");
    return { structured: { branches, currentBranchId: current.id }, line };
  },

  async switch_branch({ session: s }, { branch }) {
    const move = moveOf(await s.switchBranch(branch, MOVE));
    return { structured: move, line: `Switched to ${where(move.branch)}; ${moveTail(move)}.` };
  },

  async history({ session: s }, { limit }) {
    const want = limit ?? 20;
    const events: ToolOutput<"history">["events"] = [];
    let cursor: string | null = null;
    let more = false;
    // The capture of files each checkpoint records is a state entry: the checkpoint itself already says it.
    do {
      const page = await s.timeline({ limit: want, cursor });
      for (const item of page.items) {
        if (item.kind === "state") continue;
        if (events.length === want) {
          more = true;
          break;
        }
        events.push({ kind: item.kind, id: item.id, branchId: item.branchId, at: item.at.toISOString(), summary: item.summary });
      }
      cursor = page.nextCursor;
    } while (cursor && !more);
    await nameForkCheckpoints(s, events);
    const line =
      events.length === 0
        ? "Nothing has happened in this session yet."
        : `${countOf(events.length, "event")}, newest first: ${events.map((e) => e.summary).join("; ")}${more ? "; older ones left out" : ""}.`;
    return { structured: { events, more }, line };
  },
};

/**
 * A branch's event says what made it and where (`rollback at position 3`): the checkpoint it forked from is named
 * too, when it is known (`rollback to cp_abc "before the refactor" at position 3`).
 */
async function nameForkCheckpoints(s: SessionHandle, events: ToolOutput<"history">["events"]): Promise<void> {
  const forks = events.filter((e) => e.kind === "branch");
  if (forks.length === 0) return;
  const branches = new Map<string, Branch>((await s.branches()).map((b) => [b.id, b]));
  const checkpoints = new Map<string, Checkpoint | null>();
  for (const e of forks) {
    const cpId = branches.get(e.id)?.forkCheckpointId;
    if (!cpId) continue;
    if (!checkpoints.has(cpId)) checkpoints.set(cpId, await findCheckpoint(s, cpId).catch(() => null));
    const cp = checkpoints.get(cpId) ?? { id: cpId, name: null };
    const rollback = /^rollback at position (\d+)$/.exec(e.summary);
    e.summary = rollback ? `rollback to ${named(cp)} at position ${rollback[1]}` : `${e.summary} (from checkpoint ${named(cp)})`;
  }
}
