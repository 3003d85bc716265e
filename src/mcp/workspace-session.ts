// The one session of a workspace directory and user: found again by the directory's real path (a metadata key set
// once its workspace is attached), or named by the caller; created and attached on first use.
import { realpathSync, statSync } from "node:fs";
import { basename, resolve } from "node:path";
import type { Forkpoint, JsonValue, SessionHandle } from "../index.js";

/** The session metadata key holding the real path of the directory an MCP session's workspace is. */
export const WORKSPACE_KEY = "mcpWorkspace";
/** The key holding the exclude list the workspace was attached with (kept as the workspace keeps it). */
export const EXCLUDE_KEY = "mcpExclude";

/** Patterns every MCP workspace leaves out: a rewind must never rewrite a git repository's own files. */
export const ALWAYS_EXCLUDED = [".git/"];

export interface WorkspaceSession {
  session: SessionHandle;
  /** The directory's real path. */
  dir: string;
  /** True when this call created the session (or attached a named one). */
  attached: boolean;
  /** The exclude list the workspace keeps (a different one given now is not applied: see `excludeIgnored`). */
  exclude: string[];
  /** Set when `exclude` was given but the workspace keeps another one. */
  excludeIgnored: boolean;
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
  return real;
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

const stringList = (value: JsonValue | undefined): string[] | null =>
  Array.isArray(value) && value.every((v) => typeof v === "string") ? (value as string[]) : null;

/**
 * The session of `dir` for `userId`: `sessionId` when given (attached to `dir` if it has no MCP workspace yet), else
 * the one whose metadata names `dir`, else a new one. A workspace is attached once only: attaching again would take
 * the files as they are now for what forkpoint last saw, and a hand edit since the last checkpoint would no longer be
 * drift (a later rewind would overwrite it unsaved).
 */
export async function workspaceSession(
  fp: Forkpoint,
  o: { dir: string; userId: string; sessionId?: string; exclude?: string[] },
): Promise<WorkspaceSession> {
  const dir = realDirectory(o.dir);
  const wanted = [...ALWAYS_EXCLUDED, ...(o.exclude ?? []).filter((p) => !ALWAYS_EXCLUDED.includes(p))];
  const session = o.sessionId ? await fp.getSession(o.sessionId, { userId: o.userId }) : await findByDirectory(fp, o.userId, dir);
  if (session) {
    const metadata = (await session.info()).metadata ?? {};
    const known = metadata[WORKSPACE_KEY];
    if (typeof known === "string") {
      if (known !== dir)
        throw new WorkspaceSessionError(
          `session ${session.id} keeps the workspace ${known}, not ${dir}: give that --workspace, or another --session`,
        );
      const exclude = stringList(metadata[EXCLUDE_KEY]) ?? ALWAYS_EXCLUDED;
      return { session, dir, attached: false, exclude, excludeIgnored: o.exclude !== undefined && !sameList(exclude, wanted) };
    }
  }
  const target = session ?? (await fp.createSession({ userId: o.userId, title: `mcp: ${basename(dir) || dir}` }));
  await target.attachWorkspace(dir, { exclude: wanted });
  // Marked only once attached: a crash before leaves a session no later start takes for this directory's.
  const metadata = (await target.info()).metadata ?? {};
  await target.update({ metadata: { ...metadata, [WORKSPACE_KEY]: dir, [EXCLUDE_KEY]: wanted } });
  return { session: target, dir, attached: true, exclude: wanted, excludeIgnored: false };
}

/** The oldest session of `userId` whose metadata names `dir` (two started at once may both create one: the first wins). */
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
