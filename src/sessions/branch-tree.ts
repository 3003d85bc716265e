// branchTree: a flat branch list nested by parent, for drawing the tree.
import type { Branch, BranchTreeNode } from "../models/types.js";

/** Nests a flat branch list by `parentId`, in creation order; returns the roots. */
export function branchTree(branches: Branch[]): BranchTreeNode[] {
  const nodes = new Map(branches.map((b) => [b.id, { ...b, children: [] as BranchTreeNode[] }]));
  const roots: BranchTreeNode[] = [];
  for (const node of nodes.values()) {
    const parent = node.parentId ? nodes.get(node.parentId) : undefined;
    (parent ? parent.children : roots).push(node);
  }
  return roots;
}
