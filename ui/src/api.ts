// Calls to the UI server's JSON endpoints, each carrying the token from the page's URL; each can be aborted.
import type {
  Checkpoint,
  CheckpointDiff,
  HistoryPage,
  PlanAt,
  MoveResult,
  Page,
  Restored,
  SessionInfo,
  SessionTree,
  ToolInvocation,
  UserInfo,
  Versions,
} from "./types";

/** The token of the printed URL: kept for the tab's life, so a reload without it still works. */
const token = (() => {
  const fromUrl = new URLSearchParams(location.search).get("token");
  if (fromUrl) sessionStorage.setItem("forkpoint-token", fromUrl);
  return fromUrl ?? sessionStorage.getItem("forkpoint-token") ?? "";
})();

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** A move stopped by a failing undo or replay (UNDO_FAILED, REPLAY_FAILED): the calls it undid or replayed first. */
    readonly stopped?: { undone: ToolInvocation[]; replayed: ToolInvocation[] },
  ) {
    super(message);
  }
}

/** True for the rejection of a call whose signal was aborted: a late answer nobody waits for any more. */
export const isAbort = (error: unknown): boolean => error instanceof DOMException && error.name === "AbortError";

type Params = Record<string, string | undefined>;

/** Where the session was when a move was planned: sent back with the move, which is refused if it moved since. */
export interface IfAt {
  branchId: string;
  head: number;
}

async function call<T>(
  method: "GET" | "POST",
  path: string,
  params: Params,
  signal?: AbortSignal,
  extra: { ifAt?: IfAt } = {},
): Promise<T> {
  const defined = Object.fromEntries(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
  const url = method === "GET" ? `${path}?${new URLSearchParams(defined)}` : path;
  const res = await fetch(url, {
    method,
    signal,
    headers: { "x-forkpoint-token": token, ...(method === "POST" ? { "content-type": "application/json" } : {}) },
    ...(method === "POST" ? { body: JSON.stringify({ ...defined, ...extra }) } : {}),
  });
  const body = (await res.json()) as T & {
    error?: { code: string; message: string; undone?: ToolInvocation[]; replayed?: ToolInvocation[] };
  };
  if (!res.ok) {
    const e = body.error;
    const stopped = e?.undone && e.replayed ? { undone: e.undone, replayed: e.replayed } : undefined;
    throw new ApiError(e?.code ?? String(res.status), e?.message ?? res.statusText, stopped);
  }
  return body;
}

const get = <T>(path: string, params: Params, signal?: AbortSignal) => call<T>("GET", path, params, signal);

export const api = {
  config: () => get<{ allowWrites: boolean }>("/api/config", {}),
  users: (cursor?: string) => get<Page<UserInfo>>("/api/users", { cursor }),
  sessions: (user: string, q: string | undefined, cursor: string | undefined, signal?: AbortSignal) =>
    get<Page<SessionInfo>>("/api/sessions", { user, q, cursor }, signal),
  session: (user: string, session: string, signal?: AbortSignal) => get<SessionTree>("/api/session", { user, session }, signal),
  checkpoints: (user: string, session: string, cursor: string | undefined, signal?: AbortSignal) =>
    get<Page<Checkpoint>>("/api/checkpoints", { user, session, cursor }, signal),
  history: (user: string, session: string, branch: string, before: number | undefined, signal?: AbortSignal) =>
    get<HistoryPage>("/api/history", { user, session, branch, before: before === undefined ? undefined : String(before) }, signal),
  checkpoint: (user: string, session: string, checkpoint: string, signal?: AbortSignal) =>
    get<Restored>("/api/checkpoint", { user, session, checkpoint }, signal),
  diff: (user: string, session: string, a: string, b: string, signal?: AbortSignal) =>
    get<CheckpointDiff>("/api/diff", { user, session, a, b }, signal),
  versions: (user: string, session: string, message: string, signal?: AbortSignal) =>
    get<Versions>("/api/versions", { user, session, message }, signal),
  plan: (user: string, session: string, target: { checkpointId?: string; branchId?: string }, signal?: AbortSignal) =>
    call<PlanAt>("POST", "/api/plan", { user, session, ...target }, signal),
  /** The rollback planned at `ifAt` (the plan's `at`): refused with SESSION_MOVED if the session moved since. */
  rollback: (user: string, session: string, checkpointId: string, ifAt: IfAt) =>
    call<MoveResult>("POST", "/api/rollback", { user, session, checkpointId }, undefined, { ifAt }),
  /** The switch planned at `ifAt` (the plan's `at`): refused with SESSION_MOVED if the session moved since. */
  switch: (user: string, session: string, branchId: string, ifAt: IfAt) =>
    call<MoveResult>("POST", "/api/switch", { user, session, branchId }, undefined, { ifAt }),
};
