// What is wrong with a session's branch tree as rows: an ancestry that loops, a current branch that is not its own.
import type { BranchRow, SessionRow } from "../../store/port/index.js";
import type { VerifyProblem } from "./session-check.js";

/** Each cycle in the branches' parent links (once, named by its first branch), and a current branch of another session. */
export function treeProblems(session: SessionRow, branches: BranchRow[]): VerifyProblem[] {
  const problems: VerifyProblem[] = [];
  const byId = new Map(branches.map((b) => [b.id, b]));
  const reported = new Set<string>();
  for (const start of branches) {
    // Walk up at most as many steps as there are branches: a walk that comes back to its start is in a cycle.
    const path: string[] = [start.id];
    let at = start.parentId === null ? undefined : byId.get(start.parentId);
    while (at && at.id !== start.id && path.length <= branches.length) {
      path.push(at.id);
      at = at.parentId === null ? undefined : byId.get(at.parentId);
    }
    if (at?.id !== start.id || path.some((id) => reported.has(id))) continue;
    for (const id of path) reported.add(id);
    problems.push({ kind: "branch", id: start.id, detail: `its ancestry is a cycle: ${[...path, start.id].join(" -> ")}` });
  }
  if (!byId.has(session.currentBranchId)) {
    problems.push({
      kind: "branch",
      id: session.currentBranchId,
      detail: `session ${session.id}'s current branch is not one of its branches`,
    });
  }
  return problems;
}
