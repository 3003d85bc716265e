// The UI's JSON endpoints: each one a call of the public API, with its input read from the query or the body.
import { ConflictError, ValidationError, type Forkpoint, type PlanTarget, type SessionHandle, type SessionInfo } from "../index.js";

/** What a route receives: the query, the parsed JSON body (POST), and whether writes are allowed. */
export interface ApiRequest {
  method: string;
  query: URLSearchParams;
  body: Record<string, unknown>;
}

type Route = (fp: Forkpoint, req: ApiRequest, allowWrites: boolean) => Promise<unknown>;

/** A required string parameter, from the body for POST and the query otherwise; a ValidationError names it. */
function param(req: ApiRequest, name: string): string {
  const value = req.method === "POST" ? req.body[name] : req.query.get(name);
  if (typeof value !== "string" || value === "") throw new ValidationError(name, "is required");
  return value;
}

function optionalParam(req: ApiRequest, name: string): string | undefined {
  const value = req.method === "POST" ? req.body[name] : req.query.get(name);
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** The session named by `session`, as its owner `user` sees it (NotFoundError for another user's). */
const session = (fp: Forkpoint, req: ApiRequest): Promise<SessionHandle> =>
  fp.getSession(param(req, "session"), { userId: param(req, "user") });

/** Every page of a listing, for the tree view (which draws every branch and checkpoint of one session). */
async function all<T>(list: (cursor: string | null) => Promise<{ items: T[]; nextCursor: string | null }>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const page = await list(cursor);
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

const SEARCH_PAGE = 20;

/**
 * A user's sessions, newest first, whose title contains `q` (case-insensitive). The engine lists by owner only, so a
 * search reads the listing page by page and keeps the matches; its cursor is the listing's own.
 */
async function searchSessions(fp: Forkpoint, userId: string, q: string, cursor: string | null) {
  const needle = q.toLowerCase();
  const items: SessionInfo[] = [];
  let next = cursor;
  do {
    const page = await fp.listSessions({ userId, limit: 100, cursor: next });
    for (const s of page.items) if ((s.title ?? "").toLowerCase().includes(needle)) items.push(s);
    next = page.nextCursor;
  } while (next && items.length < SEARCH_PAGE);
  return { items, nextCursor: next };
}

/** How many times a session's tree is read again when another server changed the session while it was read. */
const TREE_READS = 10;

/**
 * The session's info, branches, tool track and checkpoints as one state of it. They are separate reads, and another
 * app server may move the session or write to it between them: the reads are made again until info() reads the same
 * after the rest as before them (a move or a new entry changes it). Whatever the writes, the answer's info is the one
 * read first and its checkpoints are read before the branches, which are never removed: the current branch and every
 * checkpoint's branch are listed.
 */
async function sessionTree(s: SessionHandle) {
  for (let read = 1; ; read++) {
    const info = await s.info();
    const checkpoints = await all((cursor) => s.listCheckpoints({ limit: 1000, cursor }));
    const [branches, toolTrack] = await Promise.all([s.branches(), s.toolTrack()]);
    const still = JSON.stringify(await s.info()) === JSON.stringify(info);
    if (still || read === TREE_READS) return { info, branches, toolTrack, checkpoints };
  }
}

function refuseWrites(allowWrites: boolean): void {
  if (!allowWrites) throw new ConflictError("the UI was started without --allow-writes: moves are refused", "READ_ONLY");
}

function planTarget(req: ApiRequest): PlanTarget {
  const checkpointId = optionalParam(req, "checkpointId");
  const branchId = optionalParam(req, "branchId");
  if (checkpointId && !branchId) return { checkpointId };
  if (branchId && !checkpointId) return { branchId };
  throw new ValidationError("target", "give one of checkpointId or branchId");
}

/** The routes by "METHOD /path". */
export const routes: Record<string, Route> = {
  "GET /api/config": async (_fp, _req, allowWrites) => ({ allowWrites }),
  "GET /api/users": (fp, req) => fp.listUsers({ limit: 50, cursor: optionalParam(req, "cursor") ?? null }),
  "GET /api/sessions": (fp, req) => {
    const userId = param(req, "user");
    const cursor = optionalParam(req, "cursor") ?? null;
    const q = optionalParam(req, "q");
    return q ? searchSessions(fp, userId, q, cursor) : fp.listSessions({ userId, limit: SEARCH_PAGE, cursor });
  },
  /** A session's tree: its branches, its checkpoints and where the world is (the current lineage's tool track). */
  "GET /api/session": async (fp, req) => sessionTree(await session(fp, req)),
  "GET /api/checkpoint": async (fp, req) => (await session(fp, req)).restore(param(req, "checkpoint")),
  "GET /api/history": async (fp, req) => (await session(fp, req)).history({ branchId: param(req, "branch") }),
  /** The diff of two checkpoints, with their workspace files' when the session has a workspace (null otherwise). */
  "GET /api/diff": async (fp, req) => {
    const s = await session(fp, req);
    const [a, b] = [param(req, "a"), param(req, "b")];
    const diff = await s.diff(a, b);
    const files = await s.diffFiles(a, b).then(
      ({ added, modified, deleted }) => ({ added, modified, deleted }),
      (error: unknown) => {
        if (error instanceof ValidationError && /no workspace/.test(error.message)) return null;
        throw error;
      },
    );
    return { ...diff, files };
  },
  "GET /api/versions": async (fp, req) => (await session(fp, req)).versions(param(req, "message")),
  "POST /api/plan": async (fp, req) => (await session(fp, req)).plan(planTarget(req)),
  "POST /api/rollback": async (fp, req, allowWrites) => {
    refuseWrites(allowWrites);
    return (await session(fp, req)).rollback(param(req, "checkpointId"));
  },
  "POST /api/switch": async (fp, req, allowWrites) => {
    refuseWrites(allowWrites);
    return (await session(fp, req)).switchBranch(param(req, "branchId"));
  },
};
