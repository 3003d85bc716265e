// The page: users and their sessions on the left, the selected session's tree in the middle, details on the right.
import { useCallback, useEffect, useState } from "react";
import { api } from "./api";
import { CheckpointPanel, DiffPanel, ErrorLine, PlanPanel, Tools, VersionsPanel, type MoveTarget } from "./Panels";
import { TreeView } from "./TreeView";
import type { Page, SessionInfo, SessionTree, UserInfo } from "./types";

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
              <bdi>{u.userId}</bdi>
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
  const load = useCallback(
    (cursor?: string) =>
      api
        .sessions(props.user, q || undefined, cursor)
        .then((p) => setPage((prev) => (cursor && prev ? { items: [...prev.items, ...p.items], nextCursor: p.nextCursor } : p)), setError),
    [props.user, q],
  );
  useEffect(() => {
    setError(null);
    const timer = setTimeout(() => void load(), 150);
    return () => clearTimeout(timer);
  }, [load]);
  return (
    <section>
      <h2>
        Sessions of <bdi>{props.user}</bdi>
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
              <bdi>{s.title ?? "(untitled)"}</bdi>
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

export function App() {
  const [allowWrites, setAllowWrites] = useState(false);
  const [user, setUser] = useState<string>();
  const [sessionId, setSessionId] = useState<string>();
  const [tree, setTree] = useState<SessionTree | null>(null);
  const [treeError, setTreeError] = useState<unknown>(null);
  const [checkpointId, setCheckpointId] = useState<string>();
  const [messageId, setMessageId] = useState<string>();
  const [move, setMove] = useState<MoveTarget>();
  const [generation, setGeneration] = useState(0);

  useEffect(() => void api.config().then((c) => setAllowWrites(c.allowWrites)), []);
  useEffect(() => {
    if (!user || !sessionId) return;
    setTreeError(null);
    api.session(user, sessionId).then(setTree, setTreeError);
  }, [user, sessionId, generation]);

  const checkpoint = tree?.checkpoints.find((c) => c.id === checkpointId);
  const selectSession = (id: string) => {
    setSessionId(id);
    setTree(null);
    // The same session again reloads it (what other servers wrote meanwhile): its id alone would not change the effect's deps.
    setGeneration((g) => g + 1);
    setCheckpointId(undefined);
    setMessageId(undefined);
    setMove(undefined);
  };
  const branchLabel = (id: string) => {
    const b = tree?.branches.find((x) => x.id === id);
    return b?.name ?? `branch ${id.slice(-6)}`;
  };

  return (
    <div className="app">
      <aside className="left">
        <h1>forkpoint</h1>
        <p className="muted" data-testid="mode">
          {allowWrites ? "writes allowed" : "read-only"}
        </p>
        <Users
          selected={user}
          onSelect={(u) => {
            setUser(u);
            selectSession("");
            setSessionId(undefined);
          }}
        />
        {user && <Sessions user={user} selected={sessionId} onSelect={selectSession} />}
      </aside>
      <main className="middle">
        <ErrorLine error={treeError} />
        {tree ? (
          <>
            <header className="tree-header">
              <b data-testid="session-title">
                <bdi>{tree.info.title ?? "(untitled)"}</bdi>
              </b>{" "}
              <span className="muted">
                {tree.branches.length} branches, {tree.checkpoints.length} checkpoints; world:{" "}
                {tree.toolTrack.filter((t) => t.applied).length} tool effects applied on branch {tree.info.currentBranchId.slice(-6)}
              </span>
            </header>
            <TreeView
              key={`${tree.info.id}:${generation}`}
              tree={tree}
              selectedCheckpoint={checkpointId}
              onCheckpoint={(id) => {
                setCheckpointId(id);
                setMove(undefined);
              }}
              onBranch={(id) => setMove({ kind: "switch", id, label: branchLabel(id) })}
            />
          </>
        ) : (
          <p className="muted">{sessionId ? "loading…" : "Pick a user and a session."}</p>
        )}
      </main>
      <aside className="right">
        {tree && user && sessionId && (
          <>
            {move && (
              <PlanPanel
                user={user}
                session={sessionId}
                target={move}
                allowWrites={allowWrites}
                onMoved={() => setGeneration((g) => g + 1)}
              />
            )}
            {messageId && <VersionsPanel user={user} session={sessionId} messageId={messageId} onClose={() => setMessageId(undefined)} />}
            {checkpoint && (
              <CheckpointPanel
                user={user}
                session={sessionId}
                checkpoint={checkpoint}
                onVersions={setMessageId}
                onPlan={() => setMove({ kind: "rollback", id: checkpoint.id, label: checkpoint.name ?? checkpoint.id.slice(-6) })}
              />
            )}
            {tree.checkpoints.length > 0 && (
              <DiffPanel user={user} session={sessionId} checkpoints={tree.checkpoints} initialA={checkpointId} />
            )}
            <section>
              <h2>The world: tool effects applied ({tree.toolTrack.filter((t) => t.applied).length})</h2>
              <Tools tools={tree.toolTrack.filter((t) => t.applied)} testid="world-tools" />
            </section>
            <section>
              <h2>Checkpoints</h2>
              <ul className="list" data-testid="checkpoint-list">
                {tree.checkpoints.map((c) => (
                  <li key={c.id}>
                    <button className="link" onClick={() => setCheckpointId(c.id)}>
                      <bdi>{c.name ?? c.id.slice(-6)}</bdi>
                    </button>{" "}
                    <span className="muted">
                      @{c.position} on <bdi>{branchLabel(c.branchId)}</bdi>
                    </span>
                  </li>
                ))}
              </ul>
            </section>
          </>
        )}
      </aside>
    </div>
  );
}
