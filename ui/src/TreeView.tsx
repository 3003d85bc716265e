// The session's tree as a graph: a node per branch (its checkpoints inside), zoom and pan, big subtrees collapsed.
import { Background, Controls, Handle, MiniMap, Position, ReactFlow, type Edge, type Node, type NodeProps } from "@xyflow/react";
import { createContext, useContext, useMemo, useState } from "react";
import { MAX_CHIPS, NODE_WIDTH, indexTree, initiallyOpen, layout, nodeHeight, visibleGraph, type GraphNode } from "./layout";
import type { SessionTree } from "./types";
import { Bdi } from "./bidi";

interface TreeActions {
  selectedCheckpoint: string | undefined;
  selectedBranch: string | undefined;
  /** Branches with more checkpoints than their node shows. */
  more: ReadonlySet<string>;
  /** Calls whose effect is in the world: the session's applied set, those applied off the current lineage too. */
  appliedInWorld: number;
  onCheckpoint: (id: string) => void;
  onBranch: (id: string) => void;
  toggle: (id: string) => void;
  showAll: (parentId: string) => void;
}
const Actions = createContext<TreeActions | null>(null);
const useActions = () => useContext(Actions)!;

type FlowNode = Node<{ node: GraphNode }>;

const short = (id: string) => id.slice(-6);

function BranchNode({ data }: NodeProps<FlowNode>) {
  const a = useActions();
  const n = data.node;
  if (n.kind === "more")
    return (
      <div className="node more">
        <Handle type="target" position={Position.Left} />
        <button className="nodrag" onClick={() => a.showAll(n.parentId)}>
          +{n.hidden} more branches
        </button>
      </div>
    );
  const b = n.branch;
  return (
    <div
      className={`node branch${b.current ? " current" : ""}${a.selectedBranch === b.id ? " selected" : ""}`}
      data-testid={`branch-${b.id}`}
    >
      <Handle type="target" position={Position.Left} />
      <div className="node-title">
        <button className="nodrag link" title="show this branch's history" onClick={() => a.onBranch(b.id)}>
          <Bdi>{b.name ?? `${b.reason} ${short(b.id)}`}</Bdi>
        </button>
        <span className="muted"> head {b.head}</span>
        {b.current && (
          <span className="badge world" title="the current branch: where the world is">
            world · {a.appliedInWorld} applied
          </span>
        )}
      </div>
      <div className="chips">
        {n.checkpoints.slice(0, MAX_CHIPS).map((c) => (
          <button
            key={c.id}
            className={`chip nodrag${a.selectedCheckpoint === c.id ? " selected" : ""}`}
            data-testid={`checkpoint-${c.id}`}
            title={`checkpoint at ${c.position}`}
            onClick={() => a.onCheckpoint(c.id)}
          >
            ◆ <Bdi>{c.name ?? short(c.id)}</Bdi>
          </button>
        ))}
        {(n.checkpoints.length > MAX_CHIPS || a.more.has(b.id)) && <span className="muted">more in the list</span>}
      </div>
      {n.childCount > 0 && (
        <button className="toggle nodrag" onClick={() => a.toggle(b.id)} title={n.open ? "collapse the subtree" : "expand the subtree"}>
          {n.open ? "−" : `+${n.hidden}`}
        </button>
      )}
      <Handle type="source" position={Position.Right} />
    </div>
  );
}

const nodeTypes = { branch: BranchNode };

/** The minimap's colour of a node: the current branch stands out, as in the graph. */
function miniMapColor(n: Node): string {
  const g = n.data.node as GraphNode;
  return g.kind === "branch" && g.branch.current ? "#12b76a" : "#98a2b3";
}

export function TreeView(props: {
  tree: SessionTree;
  selectedCheckpoint: string | undefined;
  selectedBranch: string | undefined;
  onCheckpoint: (id: string) => void;
  onBranch: (id: string) => void;
}) {
  const { tree } = props;
  const index = useMemo(() => indexTree(tree.branches), [tree.branches]);
  const currentId = tree.info.currentBranchId;
  const [open, setOpen] = useState(() => initiallyOpen(index, currentId));
  const [all, setAll] = useState(() => new Set<string>());
  const { nodes, edges } = useMemo(() => {
    const g = visibleGraph(index, tree.checkpoints, open, all, currentId);
    const at = layout(g.nodes, g.edges);
    const nodes: FlowNode[] = g.nodes.map((n) => ({
      id: n.id,
      type: "branch",
      position: at.get(n.id)!,
      width: NODE_WIDTH,
      height: nodeHeight(n),
      data: { node: n },
    }));
    const edges: Edge[] = g.edges.map((e) => ({ id: e.id, source: e.source, target: e.target, label: e.label }));
    return { nodes, edges };
  }, [index, tree.checkpoints, open, all, currentId]);
  const more = useMemo(() => new Set(tree.moreCheckpoints), [tree.moreCheckpoints]);
  const actions: TreeActions = {
    selectedCheckpoint: props.selectedCheckpoint,
    selectedBranch: props.selectedBranch,
    more,
    appliedInWorld: tree.world.length,
    onCheckpoint: props.onCheckpoint,
    onBranch: props.onBranch,
    toggle: (id) =>
      setOpen((prev) => {
        const next = new Set(prev);
        if (next.has(id)) next.delete(id);
        else next.add(id);
        return next;
      }),
    showAll: (id) => setAll((prev) => new Set(prev).add(id)),
  };
  return (
    <Actions.Provider value={actions}>
      <div className="graph" data-testid="graph">
        <ReactFlow nodes={nodes} edges={edges} nodeTypes={nodeTypes} fitView minZoom={0.05} nodesDraggable={false}>
          <Background />
          <Controls showInteractive={false} />
          <MiniMap pannable zoomable nodeColor={miniMapColor} />
        </ReactFlow>
      </div>
    </Actions.Provider>
  );
}
