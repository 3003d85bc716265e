// Calls to the UI server's JSON endpoints, each carrying the token from the page's URL.
import type { CheckpointDiff, MovePlan, MoveResult, Page, Restored, SessionInfo, SessionTree, UserInfo, Versions } from "./types";

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
  ) {
    super(message);
  }
}

async function call<T>(method: "GET" | "POST", path: string, params: Record<string, string | undefined>): Promise<T> {
  const defined = Object.fromEntries(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
  const url = method === "GET" ? `${path}?${new URLSearchParams(defined)}` : path;
  const res = await fetch(url, {
    method,
    headers: { "x-forkpoint-token": token, ...(method === "POST" ? { "content-type": "application/json" } : {}) },
    ...(method === "POST" ? { body: JSON.stringify(defined) } : {}),
  });
  const body = (await res.json()) as T & { error?: { code: string; message: string } };
  if (!res.ok) throw new ApiError(body.error?.code ?? String(res.status), body.error?.message ?? res.statusText);
  return body;
}

export const api = {
  config: () => call<{ allowWrites: boolean }>("GET", "/api/config", {}),
  users: (cursor?: string) => call<Page<UserInfo>>("GET", "/api/users", { cursor }),
  sessions: (user: string, q?: string, cursor?: string) => call<Page<SessionInfo>>("GET", "/api/sessions", { user, q, cursor }),
  session: (user: string, session: string) => call<SessionTree>("GET", "/api/session", { user, session }),
  checkpoint: (user: string, session: string, checkpoint: string) =>
    call<Restored>("GET", "/api/checkpoint", { user, session, checkpoint }),
  diff: (user: string, session: string, a: string, b: string) => call<CheckpointDiff>("GET", "/api/diff", { user, session, a, b }),
  versions: (user: string, session: string, message: string) => call<Versions>("GET", "/api/versions", { user, session, message }),
  plan: (user: string, session: string, target: { checkpointId?: string; branchId?: string }) =>
    call<MovePlan>("POST", "/api/plan", { user, session, ...target }),
  rollback: (user: string, session: string, checkpointId: string) =>
    call<MoveResult>("POST", "/api/rollback", { user, session, checkpointId }),
  switch: (user: string, session: string, branchId: string) => call<MoveResult>("POST", "/api/switch", { user, session, branchId }),
};
