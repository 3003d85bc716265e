// Which host a workspace's directory is on: a database several app servers share holds workspaces of each, and a
// directory path means something only on the host that attached it.
import { hostname } from "node:os";
import { ConflictError } from "../../models/errors.js";
import type { WorkspaceRow } from "../../store/port/index.js";

/** This host's name, as workspaces attached here record it. */
export const THIS_HOST = hostname();

/** Whether the workspace's directory is on this host (one attached before hosts were recorded counts as here). */
export function isLocal(ws: Pick<WorkspaceRow, "host">): boolean {
  return ws.host === null || ws.host === undefined || ws.host === THIS_HOST;
}

/** Refuses to read or rewrite the files of a workspace another host attached (`what`: the call, for the message). */
export function assertLocal(ws: Pick<WorkspaceRow, "host" | "dir">, what: string): void {
  if (!isLocal(ws)) {
    throw new ConflictError(
      `${what}: the session's workspace ${ws.dir} is on host ${JSON.stringify(ws.host)}, not this one (${JSON.stringify(THIS_HOST)}); ` +
        `run it there${what === "scope" ? ', or move with scope "conversation"' : ""}`,
      "WORKSPACE_ON_OTHER_HOST",
    );
  }
}
