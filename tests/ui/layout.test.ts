// The graph's folding and layout at scale: a 1,000-branch tree draws a readable handful of nodes until expanded.
import { describe, expect, it } from "vitest";
import { MAX_CHILDREN, indexTree, initiallyOpen, layout, visibleGraph } from "../../ui/src/layout.js";
import type { Branch } from "../../ui/src/types.js";

const branch = (id: string, parentId: string | null, current = false): Branch => ({
  id,
  parentId,
  forkCheckpointId: null,
  forkPosition: 0,
  name: null,
  reason: parentId ? "rollback" : "root",
  head: 1,
  current,
  createdAt: "2026-01-01T00:00:00.000Z",
});

/** A root with 111 children of 8 grandchildren each (1,000 branches), the current one in the last subtree. */
function bigTree(): Branch[] {
  const branches = [branch("root", null)];
  for (let i = 0; i < 111; i++) {
    branches.push(branch(`c${i}`, "root"));
    for (let j = 0; j < 8; j++) branches.push(branch(`c${i}g${j}`, `c${i}`, i === 110 && j === 7));
  }
  return branches;
}

describe("the tree at 1,000 branches", () => {
  const branches = bigTree();
  expect(branches).toHaveLength(1000);
  const tree = indexTree(branches);
  const current = branches.find((b) => b.current)!.id;

  it("starts folded: a few dozen nodes, the path to the current branch among them", () => {
    const open = initiallyOpen(tree, current);
    const { nodes, edges } = visibleGraph(tree, [], open, new Set(), current);
    expect(nodes.length).toBeLessThanOrEqual(2 * MAX_CHILDREN + 3);
    const ids = nodes.map((n) => n.id);
    expect(ids).toContain(current);
    expect(ids).toContain("more:root");
    // Every branch is accounted for: shown, or counted in a folded node.
    const hidden = nodes.reduce((n, x) => n + x.hidden, 0);
    expect(nodes.filter((n) => n.kind === "branch").length + hidden).toBe(1000);
    expect(edges.length).toBe(nodes.length - 1);
  });

  it("expands on demand, and lays every shown node out without overlaps", () => {
    const open = new Set(branches.map((b) => b.id));
    const { nodes, edges } = visibleGraph(tree, [], open, new Set(["root"]), current);
    expect(nodes).toHaveLength(1000);
    const at = layout(nodes, edges);
    const keys = new Set([...at.values()].map((p) => `${Math.round(p.x)}:${Math.round(p.y)}`));
    expect(keys.size).toBe(1000);
  });
});
