// A session's tree read by the UI while another server moves the session between the endpoint's reads.
import { expect } from "vitest";
import type { Forkpoint, SessionHandle } from "../../src/index.js";
import { routes } from "../../src/ui/api.js";

/**
 * `viewer` with each session handle's `branches()` made to wait until `mover` (another handle on the same database:
 * another app server) has rolled the session back to `checkpointId` once, as a write landing between the reads would.
 */
function movedMidRead(viewer: Forkpoint, mover: Forkpoint, checkpointId: string): Forkpoint {
  let moved = false;
  const moveOnce = async (sessionId: string, userId: string) => {
    if (moved) return;
    moved = true;
    await (await mover.getSession(sessionId, { userId })).rollback(checkpointId);
  };
  return new Proxy(viewer, {
    get(target, key) {
      if (key !== "getSession") return Reflect.get(target, key, target) as unknown;
      return async (id: string, options: { userId: string }) => {
        const s = await target.getSession(id, options);
        return new Proxy(s, {
          get(handle, name) {
            const value = Reflect.get(handle, name, handle) as unknown;
            if (name !== "branches" || typeof value !== "function") return typeof value === "function" ? value.bind(handle) : value;
            return async () => {
              await moveOnce(id, options.userId);
              return (value as SessionHandle["branches"]).call(handle);
            };
          },
        });
      };
    },
  });
}

/** The endpoint's answer is one state of the session: its current branch is the one branch marked current, and listed. */
export async function expectOneStateWhileMoved(viewer: Forkpoint, mover: Forkpoint, ids: { session: string; cp: string; user: string }) {
  const fp = movedMidRead(viewer, mover, ids.cp);
  const query = new URLSearchParams({ user: ids.user, session: ids.session });
  const tree = (await routes["GET /api/session"]!(fp, { method: "GET", query, body: {} }, false)) as {
    info: { currentBranchId: string };
    branches: { id: string; current: boolean }[];
    checkpoints: { branchId: string }[];
    toolTrack: unknown[];
  };
  const now = await (await mover.getSession(ids.session, { userId: ids.user })).info();
  expect(tree.info.currentBranchId).toBe(now.currentBranchId);
  expect(tree.branches.filter((b) => b.current).map((b) => b.id)).toEqual([tree.info.currentBranchId]);
  const listed = new Set(tree.branches.map((b) => b.id));
  expect(tree.checkpoints.every((c) => listed.has(c.branchId))).toBe(true);
}
