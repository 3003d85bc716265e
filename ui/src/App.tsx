// The page: users and sessions on the left; the session's tree, a branch's history and the details side by side.
import { useCallback, useEffect, useRef, useState } from "react";
import { api, isAbort } from "./api";
import { branchLabel, HistoryPane } from "./History";
import { CheckpointList, CheckpointPanel, DiffPanel, ErrorLine, Tools, VersionsPanel } from "./Panels";
import { PlanPanel, type MoveTarget } from "./PlanPanel";
import { TreeView } from "./TreeView";
import type { Checkpoint, Page, SessionInfo, UserInfo } from "./types";
import { useLoad } from "./useLoad";
import { Bdi } from "./bidi";

function Users(props: { selected: string | undefined; onSelect: (u: string) => void }) {
  const [users, setUsers] = useState<Page<UserInfo> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = (cursor?: string) =>
    api
      .users(cursor)
      .then((p) => setUsers((prev) => (cursor && prev ? { items: [...prev.items, ...p.items], nextCursor: p.nextCursor } : p)), setError);
  useEffect(() => void load(), []);
  return (
    <section>
      <h2>Users</h2>
      <ErrorLine error={error} />
      <ul className="list" data-testid="users">
        {users?.items.map((u) => (
          <li key={u.userId}>
            <button className={`link${props.selected === u.userId ? " selected" : ""}`} onClick={() => props.onSelect(u.userId)}>
              <Bdi>{u.userId}</Bdi>
            </button>{" "}
            <span className="muted">{u.sessions}</span>
          </li>
        ))}
      </ul>
      {users?.nextCursor && <button onClick={() => void load(users.nextCursor!)}>More users</button>}
    </section>
  );
}

function Sessions(props: { user: string; selected: string | undefined; onSelect: (s: string) => void }) {
  const [q, setQ] = useState("");
  const [page, setPage] = useState<Page<SessionInfo> | null>(null);
  const [error, setError] = useState<unknown>(null);
  // The listing the page shows is the one for the latest user and search: an earlier one still under way is aborted.
  const running = useRef<AbortController | null>(null);
  const load = useCallback(
    (cursor?: string) => {
      running.current?.abort();
      const controller = (running.current = new AbortController());
      return api.sessions(props.user, q || undefined, cursor, controller.signal).then(
        (p) => setPage((prev) => (cursor && prev ? { items: [...prev.items, ...p.items], nextCursor: p.nextCursor } : p)),
        (e: unknown) => isAbort(e) || setError(e),
      );
    },
    [props.user, q],
  );
  useEffect(() => {
    setError(null);
    const timer = setTimeout(() => void load(), 150);
    return () => {
      clearTimeout(timer);
      running.current?.abort();
    };
  }, [load]);
  return (
    <section>
      <h2>
        Sessions of <Bdi>{props.user}</Bdi>
      </h2>
      <input placeholder="search titles" value={q} onChange={(e) => setQ(e.target.value)} data-testid="session-search" />
      <ErrorLine error={error} />
      <ul className="list" data-testid="sessions">
        {page?.items.map((s) => (
          <li key={s.id}>
            <button
              className={`link${props.selected === s.id ? " selected" : ""}`}
              onClick={() => props.onSelect(s.id)}
              data-testid={`session-${s.id}`}
            >
              <Bdi>{s.title ?? "(untitled)"}</Bdi>
            </button>
            <div className="muted">{new Date(s.updatedAt).toLocaleString()}</div>
          </li>
        ))}
        {page && page.items.length === 0 && <li className="muted">no sessions</li>}
      </ul>
      {page?.nextCursor && <button onClick={() => void load(page.nextCursor!)}>More sessions</button>}
    </section>
  );
}

type Tab = "checkpoint" | "plan" | "versions" | "diff" | "checkpoints" | "world";
const TABS: [Tab, string][] = [
  ["checkpoint", "Checkpoint"],
  ["plan", "Plan"],
  ["versions", "Versions"],
  ["diff", "Diff"],
  ["checkpoints", "Checkpoints"],
  ["world", "World"],
];

export function App() {
  const [allowWrites, setAllowWrites] = useState(false);
  const [user, setUser] = useState<string>();
  const [sessionId, setSessionId] = useState<string>();
  const [generation, setGeneration] = useState(0);
  const [branchId, setBranchId] = useState<string>();
  const [checkpoint, setCheckpoint] = useState<Checkpoint>();
  const [messageId, setMessageId] = useState<string>();
  const [move, setMove] = useState<MoveTarget>();
  const [tab, setTab] = useState<Tab>("checkpoints");
  const [listed, setListed] = useState<Checkpoint[]>([]);

  useEffect(() => void api.config().then((c) => setAllowWrites(c.allowWrites)), []);
  // The tree of the latest session clicked: a click on A then B shows B, whatever answers last.
  const { data: tree, error: treeError } = useLoad(
    user && sessionId ? (signal) => api.session(user, sessionId, signal) : null,
    [user, sessionId, generation],
    // The same session read again (after a move): its tree stays drawn meanwhile.
    user && sessionId ? `${user}\n${sessionId}` : undefined,
  );
  // A tree (re)loaded: the history shows the current branch unless another branch of it is selected.
  useEffect(() => {
    if (tree && !(branchId && tree.branches.some((b) => b.id === branchId))) setBranchId(tree.info.currentBranchId);
  }, [tree]);

  const selectSession = (id: string | undefined) => {
    setSessionId(id);
    // The same session again reloads it (what other servers wrote meanwhile): its id alone would not change the deps.
    setGeneration((g) => g + 1);
    setBranchId(undefined);
    setCheckpoint(undefined);
    setMessageId(undefined);
    setMove(undefined);
    setListed([]);
    setTab("checkpoints");
  };
  const branchOf = (id: string) => tree?.branches.find((x) => x.id === id);
  const label = (id: string) => branchLabel(branchOf(id), id);
  const selectCheckpoint = (c: Checkpoint) => {
    setCheckpoint(c);
    setBranchId(c.branchId);
    setTab("checkpoint");
  };
  const selectedBranch = branchId ? branchOf(branchId) : undefined;
  // The world: every call whose effect is applied, those that landed off the current lineage too (a rollback undoes them).
  const applied = tree?.world ?? [];
  const onLineage = new Set(tree?.toolTrack.map((t) => t.id));
  const offLineage = applied.filter((t) => !onLineage.has(t.id));
  // The diff's pickers: the checkpoints drawn in the graph and those the list has loaded, each once.
  const pickable = [...new Map([...(tree?.checkpoints ?? []), ...listed].map((c) => [c.id, c])).values()];

  return (
    <div className="app">
      <aside className="nav">
        <h1>forkpoint</h1>
        <p className="muted" data-testid="mode">
          {allowWrites ? "writes allowed" : "read-only"}
        </p>
        <Users
          selected={user}
          onSelect={(u) => {
            setUser(u);
            selectSession(undefined);
          }}
        />
        {user && <Sessions user={user} selected={sessionId} onSelect={selectSession} />}
      </aside>
      <main className="session">
        <header className="session-header">
          <ErrorLine error={treeError} />
          {tree ? (
            <>
              <b data-testid="session-title">
                <Bdi>{tree.info.title ?? "(untitled)"}</Bdi>
              </b>{" "}
              <span className="muted" data-testid="session-counts">
                {tree.branches.length} branches, {tree.checkpointCount} checkpoints; the world: {applied.length} tool effects applied, on
                branch <Bdi>{label(tree.info.currentBranchId)}</Bdi>
              </span>
            </>
          ) : (
            <span className="muted">{sessionId ? "loading…" : "Pick a user and a session."}</span>
          )}
        </header>
        {tree && user && sessionId && (
          <div className="panes">
            <section className="pane tree-pane">
              <TreeView
                key={`${tree.info.id}:${generation}`}
                tree={tree}
                selectedCheckpoint={checkpoint?.id}
                selectedBranch={branchId}
                onCheckpoint={(id) => {
                  const c = tree.checkpoints.find((x) => x.id === id);
                  if (c) selectCheckpoint(c);
                }}
                onBranch={setBranchId}
              />
            </section>
            {branchId && (
              <HistoryPane
                key={branchId}
                user={user}
                session={sessionId}
                branch={selectedBranch}
                branchId={branchId}
                generation={generation}
                onVersions={(id) => {
                  setMessageId(id);
                  setTab("versions");
                }}
                onPlanSwitch={
                  selectedBranch && !selectedBranch.current
                    ? () => {
                        setMove({ kind: "switch", id: branchId, label: label(branchId) });
                        setTab("plan");
                      }
                    : null
                }
              />
            )}
            <section className="pane details-pane">
              <nav className="tabs" role="tablist">
                {TABS.map(([id, name]) => (
                  <button key={id} role="tab" aria-selected={tab === id} className={tab === id ? "active" : ""} onClick={() => setTab(id)}>
                    {name}
                  </button>
                ))}
              </nav>
              <div className="tab-body">
                {tab === "checkpoint" &&
                  (checkpoint ? (
                    <CheckpointPanel
                      user={user}
                      session={sessionId}
                      checkpoint={checkpoint}
                      onVersions={(id) => {
                        setMessageId(id);
                        setTab("versions");
                      }}
                      onPlan={() => {
                        setMove({ kind: "rollback", id: checkpoint.id, label: checkpoint.name ?? checkpoint.id.slice(-6) });
                        setTab("plan");
                      }}
                    />
                  ) : (
                    <p className="muted">Pick a checkpoint in the graph or the list.</p>
                  ))}
                {tab === "plan" &&
                  (move ? (
                    <PlanPanel
                      user={user}
                      session={sessionId}
                      target={move}
                      allowWrites={allowWrites}
                      onMoved={() => {
                        setGeneration((g) => g + 1);
                        setBranchId(undefined);
                      }}
                      // Planned again after the session moved under the plan: the tree is read again too.
                      onReplan={() => setGeneration((g) => g + 1)}
                    />
                  ) : (
                    <p className="muted">Plan a rollback from a checkpoint, or a switch from another branch's history.</p>
                  ))}
                {tab === "versions" &&
                  (messageId ? (
                    <VersionsPanel user={user} session={sessionId} messageId={messageId} onClose={() => setTab("checkpoint")} />
                  ) : (
                    <p className="muted">Pick a message's versions in a history.</p>
                  ))}
                {tab === "diff" &&
                  (pickable.length > 0 ? (
                    <DiffPanel user={user} session={sessionId} checkpoints={pickable} initialA={checkpoint?.id} />
                  ) : (
                    <p className="muted">No checkpoints to compare.</p>
                  ))}
                {/* Kept mounted: the pages it loaded stay, and feed the diff's pickers. */}
                <div hidden={tab !== "checkpoints"}>
                  <CheckpointList
                    user={user}
                    session={sessionId}
                    generation={generation}
                    label={label}
                    selected={checkpoint?.id}
                    onSelect={selectCheckpoint}
                    onLoaded={setListed}
                  />
                </div>
                {tab === "world" && (
                  <section>
                    <h2>Tool effects applied in the world ({applied.length})</h2>
                    <Tools tools={applied} testid="world-tools" />
                    {offLineage.length > 0 && (
                      <>
                        <h3>Of those, off the current branch's lineage ({offLineage.length}): a rollback undoes them too</h3>
                        <Tools tools={offLineage} testid="world-off-lineage" />
                      </>
                    )}
                  </section>
                )}
              </div>
            </section>
          </div>
        )}
      </main>
    </div>
  );
}
