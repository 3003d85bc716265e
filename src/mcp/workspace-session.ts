// The one session of a workspace directory and user: found again by the directory's real path (a metadata key set
// once its workspace is attached), or named by the caller; created and attached on first use, one server at a time.
import { realpathSync, statSync } from "node:fs";
import { basename, parse, resolve } from "node:path";
import { ConflictError, ForkpointError, type Forkpoint, type JsonValue, type SessionHandle } from "../index.js";
import { sessionEngine } from "../sessions/session-handle.js";
import { engineOf } from "../sessions/forkpoint.js";
import { createSessionOnce } from "../sessions/session-once.js";
import { withStartLock } from "./start-lock.js";
import { canonicalExclude } from "../sessions/workspace/exclude-list.js";

/** The session metadata key holding the real path of the directory an MCP session's workspace is. */
export const WORKSPACE_KEY = "mcpWorkspace";
/** The key holding the exclude list the workspace was attached with (kept as the workspace keeps it). */
export const EXCLUDE_KEY = "mcpExclude";

/**
 * Patterns every MCP workspace leaves out, after the user's: a rewind must never rewrite a git repository's own files.
 * `.git` (no slash) is a `.git` directory or file (a worktree's, a submodule's) at any depth; being last, no pattern
 * before it can bring it back (in .gitignore syntax the last pattern that matches decides).
 */
export const ALWAYS_EXCLUDED = [".git"];
/** What workspaces attached by earlier versions keep, first in their list. */
const EARLIER_ALWAYS = [".git/"];

/** The patterns of a kept list that the user gave (the always-excluded ones left out). */
export const userPatterns = (list: readonly string[]): string[] =>
  list.filter((p) => !ALWAYS_EXCLUDED.includes(p) && !EARLIER_ALWAYS.includes(p));

/** The list a workspace is attached with: the user's patterns, then the always-excluded ones. */
export const excludeList = (user: readonly string[]): string[] => [...userPatterns(user), ...ALWAYS_EXCLUDED];

export interface WorkspaceSession {
  session: SessionHandle;
  /** The directory's real path. */
  dir: string;
  /** True when this call attached the workspace: a new session, a named one, or a new exclude list. */
  attached: boolean;
  /** The exclude list the workspace keeps. */
  exclude: string[];
  /** Set when the workspace had another exclude list, and this call attached it with `exclude` instead. */
  excludeChanged: boolean;
}

/** A problem with what the caller asked for (not a failure of the database): the CLI prints it as one line. */
export class WorkspaceSessionError extends Error {
  override name = "WorkspaceSessionError";
}

/** The real path of `dir`, which must be a directory. */
export function realDirectory(dir: string): string {
  let real: string;
  try {
    real = realpathSync(resolve(dir));
  } catch {
    throw new WorkspaceSessionError(`no directory at ${resolve(dir)}`);
  }
  if (!statSync(real).isDirectory()) throw new WorkspaceSessionError(`${real} is not a directory`);
  // The whole file system (/proc, other users' files) is no project a rewind should rewrite: a slip of the flag.
  if (real === parse(real).root) throw new WorkspaceSessionError(`${real} is the file system's root, not a project directory`);
  return real;
}

/** Whether two exclude lists are the same rules (order and repeats aside, as attachWorkspace compares them). */
const sameList = (a: readonly string[], b: readonly string[]) =>
  JSON.stringify(canonicalExclude(a)) === JSON.stringify(canonicalExclude(b));

const stringList = (value: JsonValue | undefined): string[] | null =>
  Array.isArray(value) && value.every((v) => typeof v === "string") ? (value as string[]) : null;

const shellWord = (s: string) => (/^[\w./:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

export interface WorkspaceSessionOptions {
  dir: string;
  userId: string;
  sessionId?: string;
  /** The user's exclude patterns (absent: whatever the workspace keeps, or none for a new one). */
  exclude?: string[];
  /**
   * Where the per-directory lock files live (the user's data directory): servers started at once on one directory
   * find or create its session one after the other. Absent: no lock (a single caller).
   */
  lockDir?: string;
  /** How the refusal of a new exclude list names the database in the command it suggests (`--db PATH`). */
  databaseArgs?: string[];
}

/**
 * The session of `dir` for `userId`: `sessionId` when given (attached to `dir` if it has no MCP workspace yet), else
 * the one whose metadata names `dir`, else a new one. A session whose workspace could not be attached is deleted: a
 * failed first start leaves nothing behind, and the next start attaches anew with the patterns it is given.
 *
 * A workspace is attached again only while it has no checkpoint: attaching takes the files as they are now for what
 * forkpoint last saw (a hand edit since the last checkpoint would no longer be drift, and a rewind would overwrite it
 * unsaved), and a checkpoint is only ever compared with or restored to the rules it was captured under (every earlier
 * one would be out of reach). So a new `exclude` for a workspace with checkpoints is refused, saying what to do.
 */
export async function workspaceSession(fp: Forkpoint, o: WorkspaceSessionOptions): Promise<WorkspaceSession> {
  const dir = realDirectory(o.dir);
  const run = () => findOrAttach(fp, o, dir);
  return o.lockDir ? withStartLock(o.lockDir, dir, run) : run();
}

async function findOrAttach(fp: Forkpoint, o: WorkspaceSessionOptions, dir: string): Promise<WorkspaceSession> {
  const wanted = excludeList(o.exclude ?? []);
  const found = o.sessionId ? await fp.getSession(o.sessionId, { userId: o.userId }) : await findByDirectory(fp, o.userId, dir);
  if (found) return reuse(o, found, dir, wanted);
  // Made once per directory and user: servers starting at once that share no lock file (other data directories, one
  // database) find the same session; a crash before it was attached leaves it to be attached by the next start.
  const { ref, created } = await createSessionOnce(engineOf(fp).ctx, { userId: o.userId, title: `mcp: ${basename(dir) || dir}` }, dir);
  const session = await fp.getSession(ref.id, { userId: o.userId });
  if (!created) return reuse(o, await afterItsAttach(session), dir, wanted);
  try {
    await attach(session, dir, wanted);
  } catch (error) {
    await fp.deleteSession(session.id, { userId: o.userId }).catch(() => undefined);
    throw error;
  }
  return { session, dir, attached: true, exclude: wanted, excludeChanged: false };
}

/** How long a server waits for the one that just made a directory's session to attach it (then attaches it itself). */
const ATTACH_WAIT_MS = 20_000;

/**
 * `session`, once the server that just made it has attached its workspace: attached again meanwhile, the files as they
 * are would be taken for what forkpoint last saw (an edit made through the first server, unsaved, would be hidden). One
 * made longer ago, or whose maker died before attaching it, is returned as it is.
 */
async function afterItsAttach(session: SessionHandle): Promise<SessionHandle> {
  const { createdAt } = await session.info();
  const until = createdAt.getTime() + ATTACH_WAIT_MS;
  while (Date.now() < until && !(await attachedWorkspace(session))) await new Promise((r) => setTimeout(r, 50));
  return session;
}

/** An existing session for `dir`: attached if it has no workspace, taken as it is, or attached with a new list. */
async function reuse(o: WorkspaceSessionOptions, session: SessionHandle, dir: string, wanted: string[]): Promise<WorkspaceSession> {
  const metadata = (await session.info()).metadata ?? {};
  const known = metadata[WORKSPACE_KEY];
  const other = await attachedWorkspace(session);
  if (!other) {
    // No workspace attached (a session of the user's, or one imported or cloned with its metadata but without its
    // workspace, which stays in its own database): attached, and kept whatever happens. Its checkpoints hold no files,
    // so attaching hides no edit from them; the exclude list it kept is kept unless another one is given.
    const kept = typeof known === "string" ? (stringList(metadata[EXCLUDE_KEY]) ?? EARLIER_ALWAYS) : [];
    const list = o.exclude === undefined ? excludeList(kept) : wanted;
    await attach(session, dir, list);
    return { session, dir, attached: true, exclude: list, excludeChanged: false };
  }
  let kept: string[];
  if (typeof known === "string") {
    if (known !== dir)
      throw new WorkspaceSessionError(
        `session ${session.id} keeps the workspace ${known}, not ${dir}: give that --workspace, or another --session`,
      );
    kept = stringList(metadata[EXCLUDE_KEY]) ?? EARLIER_ALWAYS;
  } else {
    // An application attached one: attaching it again would take its files as they are for saved (an edit since its
    // last checkpoint would be overwritten unsaved by the next rollback). Taken as it is, or refused.
    if (other.dir !== dir)
      throw new WorkspaceSessionError(
        `session ${session.id} has the workspace ${other.dir} attached, not ${dir}: give that --workspace, or another --session`,
      );
    kept = other.exclude;
    await session.update({ metadata: { ...metadata, [WORKSPACE_KEY]: dir, [EXCLUDE_KEY]: kept } });
  }
  if (o.exclude === undefined || sameList(userPatterns(kept), userPatterns(o.exclude)))
    return { session, dir, attached: false, exclude: kept, excludeChanged: false };
  if ((await session.listCheckpoints({ limit: 1 })).items.length > 0) throw newListRefused(session.id, o, userPatterns(kept), CHECKPOINTED);
  try {
    await attach(session, dir, wanted);
  } catch (error) {
    // A hand edit no checkpoint keeps: a checkpoint would keep it, but would fix the list too, so say both ways out.
    if (error instanceof ForkpointError && error.code === "WORKSPACE_DRIFT")
      throw newListRefused(session.id, o, userPatterns(kept), unsavedEdits(error.message));
    throw error;
  }
  return { session, dir, attached: true, exclude: wanted, excludeChanged: true };
}

/** The directory (real path) and exclude list of the workspace attached to `session`, or null when it has none. */
export async function attachedWorkspace(session: SessionHandle): Promise<{ dir: string; exclude: string[] } | null> {
  const ws = await sessionEngine(session).run((ctx, ref) => ctx.store.read((tx) => tx.getWorkspace(ref.id)));
  if (!ws) return null;
  let dir = ws.dir;
  try {
    dir = realpathSync(ws.dir);
  } catch {
    // Gone: its path as it was attached, which is no directory of the caller's.
  }
  return { dir, exclude: JSON.parse(ws.exclude) as string[] };
}

/**
 * Attaches `dir` to `session`, then marks the session as that directory's: a crash in between leaves a session no
 * later start takes for this directory's.
 */
async function attach(session: SessionHandle, dir: string, exclude: string[]): Promise<void> {
  await session.attachWorkspace(dir, { exclude });
  const metadata = (await session.info()).metadata ?? {};
  await session.update({ metadata: { ...metadata, [WORKSPACE_KEY]: dir, [EXCLUDE_KEY]: exclude } });
}

/** Why a new list is refused when the workspace has checkpoints (`kept` formats the list they were taken with). */
const CHECKPOINTED = (kept: string) =>
  `the workspace has checkpoints taken with another exclude list (${kept}), and a checkpoint is only ever restored ` +
  `under the list it was taken with: attaching it again with the new one would put every checkpoint out of reach, ` +
  `and take files changed since the last checkpoint for saved`;

/** Why a new list is refused over hand edits no checkpoint keeps (`drift` is attachWorkspace's refusal). */
const unsavedEdits = (drift: string) => (kept: string) => {
  const files = /since it last saw it \((.*)\), and no checkpoint/.exec(drift)?.[1] ?? "some files";
  return (
    `the workspace was attached with another exclude list (${kept}) and has files changed by hand since forkpoint ` +
    `last saw it (${files}) that no checkpoint keeps: attaching it again with the new list would take them for ` +
    `saved, and a rewind could write over them; a checkpoint would keep them, but fix the exclude list from then on`
  );
};

function newListRefused(
  sessionId: string,
  o: WorkspaceSessionOptions,
  kept: string[],
  why: (kept: string) => string,
): WorkspaceSessionError {
  const keptArgs = kept.length === 0 ? "no --exclude" : kept.map((p) => `--exclude ${shellWord(p)}`).join(" ");
  const del = ["forkpoint", "delete", sessionId, "-u", shellWord(o.userId), ...(o.databaseArgs ?? []).map(shellWord)].join(" ");
  return new WorkspaceSessionError(
    `${why(keptArgs)}. Either keep ${keptArgs} and write the new patterns ` +
      `in a .gitignore file in the workspace (honoured from the next checkpoint on), or start over with the new list ` +
      `after deleting this session and its checkpoints: ${del}`,
  );
}

/** The oldest session of `userId` whose metadata names `dir` (sessions made before the start lock may be several). */
async function findByDirectory(fp: Forkpoint, userId: string, dir: string): Promise<SessionHandle | null> {
  let found: string | null = null;
  let cursor: string | null = null;
  do {
    const page = await fp.listSessions({ userId, limit: 1000, cursor });
    for (const info of page.items) if (info.metadata?.[WORKSPACE_KEY] === dir) found = info.id;
    cursor = page.nextCursor;
  } while (cursor);
  return found ? fp.getSession(found, { userId }) : null;
}

/**
 * Refuses a tool call of a server started with exclude list `started` once the workspace keeps another (a server started
 * since on the directory attached it again with its own, before any checkpoint): this server would capture and rewind
 * files by rules it was not started with.
 */
export async function refuseOtherExclude(session: SessionHandle, started: readonly string[]): Promise<void> {
  // Asked before every tool call: the workspace's row only (no realpath of its directory, as attachedWorkspace does).
  const ws = await sessionEngine(session).run((ctx, ref) => ctx.store.read((tx) => tx.getWorkspace(ref.id)));
  const now = ws ? { exclude: JSON.parse(ws.exclude) as string[] } : null;
  if (!now || sameList(userPatterns(now.exclude), userPatterns(started))) return;
  const shown = (list: readonly string[]) => (userPatterns(list).length > 0 ? userPatterns(list).map(shellWord).join(" ") : "(none)");
  throw new ConflictError(
    `another server attached this workspace again with the exclude list ${shown(now.exclude)} since this one started with ` +
      `${shown(started)}: restart this server (with that list, or none to keep it) before using it`,
    "WORKSPACE_REFUSED",
  );
}
