// The UI's JSON endpoints: each one a call of the public API, with its input read from the query or the body.
import { ConflictError, ValidationError, type Forkpoint, type PlanTarget, type SessionHandle, type SessionInfo } from "../index.js";
import { sessionEngine } from "../sessions/session-handle.js";
import { planAt } from "../sessions/plan.js";
import { treeView, type TreeView } from "../sessions/tree-view.js";

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

/** Checkpoints drawn inside each branch of the graph; the rest are in the paged list. */
export const CHIPS_PER_BRANCH = 8;
/** Checkpoints per page of the list. */
export const CHECKPOINT_PAGE = 50;
/** Messages per page of a branch's history. */
export const HISTORY_PAGE = 100;

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

/**
 * The session's tree as one state of it: info, branches, tool track and each branch's newest checkpoints in one read
 * transaction (another server may move the session at any moment), bounded at any size.
 */
async function sessionTree(s: SessionHandle): Promise<TreeView> {
  return sessionEngine(s).run((ctx, ref) => treeView(ctx, ref, CHIPS_PER_BRANCH));
}

/** A page of a branch's history, oldest first: the `HISTORY_PAGE` messages before position `before` (the newest when absent). */
async function historyPage(s: SessionHandle, branchId: string, before: string | undefined) {
  const at = before === undefined ? undefined : Number(before);
  if (at !== undefined && !(Number.isSafeInteger(at) && at > 0)) throw new ValidationError("before", "must be a positive integer");
  // One more than shown: whether there are earlier messages.
  const read = await s.history({ branchId, limit: HISTORY_PAGE + 1, withVersions: true, ...(at === undefined ? {} : { before: at }) });
  const items = read.length > HISTORY_PAGE ? read.slice(1) : read;
  return { items, earlier: read.length > HISTORY_PAGE ? items[0]!.position : null };
}

function refuseWrites(allowWrites: boolean): void {
  if (!allowWrites) throw new ConflictError("the UI was started without --allow-writes: moves are refused", "READ_ONLY");
}

/**
 * The move's precondition: `ifAt: { branchId, head? }` of the body (the `at` of the plan the user confirmed), passed
 * to the move as is, so that a session moved since (another server's call, another tab) is refused with
 * SESSION_MOVED (409) rather than moved otherwise than planned. Absent: the move runs wherever the session is.
 */
function ifAtOf(req: ApiRequest): { ifAt?: { branchId: string; head?: number } } {
  const ifAt = req.body["ifAt"];
  if (ifAt === undefined || ifAt === null) return {};
  if (typeof ifAt !== "object" || Array.isArray(ifAt)) throw new ValidationError("ifAt", "must be an object { branchId, head? }");
  // The library validates its fields (and names them in its ValidationError).
  return { ifAt: ifAt as { branchId: string; head?: number } };
}

function planTarget(req: ApiRequest): PlanTarget {
  const checkpointId = optionalParam(req, "checkpointId");
  const branchId = optionalParam(req, "branchId");
  // The move's scope as `plan` takes it (the library checks its value and names the field); absent, plan's default.
  const scope = req.body["scope"];
  const scoped = scope === undefined || scope === null ? {} : { scope: scope as PlanTarget["scope"] };
  if (checkpointId && !branchId) return { checkpointId, ...scoped };
  if (branchId && !checkpointId) return { branchId, ...scoped };
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
  /** A session's tree: its branches, its checkpoints, the current lineage's tool track and the world's applied calls. */
  "GET /api/session": async (fp, req) => sessionTree(await session(fp, req)),
  "GET /api/checkpoint": async (fp, req) => (await session(fp, req)).restore(param(req, "checkpoint")),
  "GET /api/checkpoints": async (fp, req) =>
    (await session(fp, req)).listCheckpoints({ limit: CHECKPOINT_PAGE, cursor: optionalParam(req, "cursor") ?? null }),
  "GET /api/history": async (fp, req) => historyPage(await session(fp, req), param(req, "branch"), optionalParam(req, "before")),
  /**
   * The diff of two checkpoints, with their workspace files' when both hold files (null otherwise: no workspace, or a
   * checkpoint taken before it was attached, or automatic, captures none; the rest of the diff is served all the same).
   */
  "GET /api/diff": async (fp, req) => {
    const s = await session(fp, req);
    const [a, b] = [param(req, "a"), param(req, "b")];
    const diff = await s.diff(a, b);
    // The lists alone: the page shows no patch, and they read no content.
    const files = await s.diffFiles(a, b, { patch: false }).then(
      ({ added, modified, deleted }) => ({ added, modified, deleted }),
      (error: unknown) => {
        // Both are the session's checkpoints (diff read them): what diffFiles refuses is only that files cannot be compared.
        if (error instanceof ValidationError) return null;
        throw error;
      },
    );
    return { ...diff, files };
  },
  "GET /api/versions": async (fp, req) => (await session(fp, req)).versions(param(req, "message")),
  /**
   * The plan, `at`: where the session was when it was made (the `ifAt` to send with the move), and `workspace`: the
   * directory attached to the session, or null.
   */
  "POST /api/plan": async (fp, req) => {
    const s = await session(fp, req);
    const target = planTarget(req);
    // The workspace's directory: the page's moves are the conversation's, and say they leave its files as they are.
    return sessionEngine(s).run(async (ctx, ref) => ({
      ...(await planAt(ctx, ref, target)),
      workspace: (await ctx.store.read((tx) => tx.getWorkspace(ref.id)))?.dir ?? null,
    }));
  },
  "POST /api/rollback": async (fp, req, allowWrites) => {
    refuseWrites(allowWrites);
    return (await session(fp, req)).rollback(param(req, "checkpointId"), ifAtOf(req));
  },
  "POST /api/switch": async (fp, req, allowWrites) => {
    refuseWrites(allowWrites);
    return (await session(fp, req)).switchBranch(param(req, "branchId"), ifAtOf(req));
  },
};
