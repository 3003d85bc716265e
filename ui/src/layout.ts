// Which branches the graph shows (big trees start collapsed) and where they go, laid out by dagre.
import dagre from "@dagrejs/dagre";
import { isolate } from "./bidi.js";
import type { Branch, Checkpoint } from "./types.js";

/** Children shown under one branch before the rest fold into a "+N more" node. */
export const MAX_CHILDREN = 12;
/** Branches shallower than this start open (the root's children shown); deeper subtrees start collapsed. */
export const OPEN_DEPTH = 1;
/** Checkpoints drawn inside a branch's node; the rest are in the checkpoint list. */
export const MAX_CHIPS = 8;

export interface TreeIndex {
  byId: Map<string, Branch>;
  children: Map<string, Branch[]>;
  /** Branches in each branch's subtree, itself included. */
  size: Map<string, number>;
  depth: Map<string, number>;
  roots: Branch[];
}

export function indexTree(branches: Branch[]): TreeIndex {
  const byId = new Map(branches.map((b) => [b.id, b]));
  const children = new Map<string, Branch[]>();
  const roots: Branch[] = [];
  for (const b of branches) {
    if (b.parentId && byId.has(b.parentId)) children.set(b.parentId, [...(children.get(b.parentId) ?? []), b]);
    else roots.push(b);
  }
  const size = new Map<string, number>();
  const depth = new Map<string, number>();
  // Iterative: a 1,000-deep chain of edits must not overflow the stack.
  const order: Branch[] = [];
  const stack: [Branch, number][] = roots.map((r): [Branch, number] => [r, 0]).reverse();
  while (stack.length > 0) {
    const [b, d] = stack.pop()!;
    depth.set(b.id, d);
    order.push(b);
    for (const c of children.get(b.id) ?? []) stack.push([c, d + 1]);
  }
  for (const b of order.reverse()) size.set(b.id, 1 + (children.get(b.id) ?? []).reduce((n, c) => n + (size.get(c.id) ?? 1), 0));
  return { byId, children, size, depth, roots };
}

/** The branches open at first: the shallow ones, and every ancestor of the current branch (so it is in view). */
export function initiallyOpen(tree: TreeIndex, currentId: string | undefined): Set<string> {
  const open = new Set<string>();
  for (const [id, d] of tree.depth) if (d < OPEN_DEPTH) open.add(id);
  let at = currentId ? tree.byId.get(currentId) : undefined;
  while (at?.parentId) {
    open.add(at.parentId);
    at = tree.byId.get(at.parentId);
  }
  return open;
}

export type GraphNode =
  | { kind: "branch"; id: string; branch: Branch; checkpoints: Checkpoint[]; hidden: number; open: boolean; childCount: number }
  | { kind: "more"; id: string; parentId: string; hidden: number };
export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  label: string;
}

/** The visible nodes and edges: children of open branches, at most MAX_CHILDREN each unless `showAll` has the parent. */
export function visibleGraph(
  tree: TreeIndex,
  checkpoints: Checkpoint[],
  open: Set<string>,
  showAll: Set<string>,
  currentId: string | undefined,
): { nodes: GraphNode[]; edges: GraphEdge[] } {
  const byBranch = new Map<string, Checkpoint[]>();
  for (const c of checkpoints) byBranch.set(c.branchId, [...(byBranch.get(c.branchId) ?? []), c]);
  const cpById = new Map(checkpoints.map((c) => [c.id, c]));
  const onCurrentPath = new Set<string>();
  for (let at = currentId ? tree.byId.get(currentId) : undefined; at; at = at.parentId ? tree.byId.get(at.parentId) : undefined)
    onCurrentPath.add(at.id);

  const nodes: GraphNode[] = [];
  const edges: GraphEdge[] = [];
  const stack = [...tree.roots];
  while (stack.length > 0) {
    const b = stack.pop()!;
    const kids = tree.children.get(b.id) ?? [];
    const isOpen = open.has(b.id);
    const cps = (byBranch.get(b.id) ?? []).sort((x, y) => x.position - y.position);
    nodes.push({
      kind: "branch",
      id: b.id,
      branch: b,
      checkpoints: cps,
      hidden: isOpen ? 0 : (tree.size.get(b.id) ?? 1) - 1,
      open: isOpen,
      childCount: kids.length,
    });
    if (!isOpen) continue;
    let shown = kids;
    if (!showAll.has(b.id) && kids.length > MAX_CHILDREN) {
      shown = kids.slice(0, MAX_CHILDREN);
      for (const k of kids) if (onCurrentPath.has(k.id) && !shown.includes(k)) shown.push(k);
      const rest = kids.filter((k) => !shown.includes(k)).reduce((n, k) => n + (tree.size.get(k.id) ?? 1), 0);
      nodes.push({ kind: "more", id: `more:${b.id}`, parentId: b.id, hidden: rest });
      edges.push({ id: `e:more:${b.id}`, source: b.id, target: `more:${b.id}`, label: "" });
    }
    for (const k of shown) {
      const fork = k.forkCheckpointId ? cpById.get(k.forkCheckpointId) : undefined;
      edges.push({
        id: `e:${k.id}`,
        source: b.id,
        target: k.id,
        label: fork?.name ? `@${k.forkPosition} ${isolate(fork.name)}` : `@${k.forkPosition}`,
      });
      stack.push(k);
    }
  }
  return { nodes, edges };
}

export const NODE_WIDTH = 240;
export function nodeHeight(n: GraphNode): number {
  if (n.kind === "more") return 40;
  return 64 + Math.ceil(Math.min(n.checkpoints.length, MAX_CHIPS) / 2) * 26;
}

/** Positions (top-left corners) from dagre, left to right as the conversation goes. */
export function layout(nodes: GraphNode[], edges: GraphEdge[]): Map<string, { x: number; y: number }> {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: "LR", nodesep: 24, ranksep: 140 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of nodes) g.setNode(n.id, { width: NODE_WIDTH, height: nodeHeight(n) });
  for (const e of edges) g.setEdge(e.source, e.target);
  dagre.layout(g);
  const at = new Map<string, { x: number; y: number }>();
  for (const n of nodes) {
    const p = g.node(n.id);
    at.set(n.id, { x: p.x - NODE_WIDTH / 2, y: p.y - nodeHeight(n) / 2 });
  }
  return at;
}
