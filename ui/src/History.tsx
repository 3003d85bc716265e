// The middle pane: the selected branch's history (any branch, with or without a checkpoint), page by page.
import { useEffect, useRef, useState } from "react";
import { api, isAbort } from "./api";
import { ErrorLine, Text } from "./Panels";
import type { Branch, VersionedMessage } from "./types";
import { useLoad } from "./useLoad";
import { Bdi } from "./bidi";

/** The label of a branch: its name, else how it was made and the end of its id. */
export const branchLabel = (b: Branch | undefined, id: string) => b?.name ?? `${b?.reason ?? "branch"} ${id.slice(-6)}`;

function MessageRow({ m, onVersions }: { m: VersionedMessage; onVersions: (id: string) => void }) {
  return (
    <li className="message" data-role={m.role} data-position={m.position}>
      <div className="message-head">
        <Bdi className="role">{m.role}</Bdi> <span className="muted">@{m.position}</span>
        {m.versions.count > 1 && (
          <button className="link versions" onClick={() => onVersions(m.id)} title="this message's versions">
            ‹ {m.versions.index + 1}/{m.versions.count} ›
          </button>
        )}
      </div>
      <div className="content">
        <Text value={m.content} />
      </div>
    </li>
  );
}

export function HistoryPane(props: {
  user: string;
  session: string;
  branch: Branch | undefined;
  branchId: string;
  /** Bumped when the session moved: the same branch is read again. */
  generation: number;
  onVersions: (messageId: string) => void;
  /** Offered for a branch other than the current one only: a switch to where the session is would do nothing. */
  onPlanSwitch: (() => void) | null;
}) {
  const { user, session, branchId } = props;
  const first = useLoad((signal) => api.history(user, session, branchId, undefined, signal), [user, session, branchId, props.generation]);
  // Earlier pages, prepended as they are asked for; dropped with the branch.
  const [earlier, setEarlier] = useState<{ items: VersionedMessage[]; earlier: number | null } | null>(null);
  const [moreError, setMoreError] = useState<unknown>(null);
  // A page asked for before the history was read again is dropped with it.
  const more = useRef<AbortController | null>(null);
  useEffect(() => {
    setEarlier(null);
    setMoreError(null);
    return () => more.current?.abort();
  }, [first.data]);
  const items = [...(earlier?.items ?? []), ...(first.data?.items ?? [])];
  const next = earlier ? earlier.earlier : (first.data?.earlier ?? null);
  const loadEarlier = () => {
    if (next === null) return;
    more.current?.abort();
    more.current = new AbortController();
    api.history(user, session, branchId, next, more.current.signal).then(
      (page) => setEarlier((prev) => ({ items: [...page.items, ...(prev?.items ?? [])], earlier: page.earlier })),
      (error: unknown) => isAbort(error) || setMoreError(error),
    );
  };
  const current = props.branch?.current ?? false;
  return (
    <section className="pane history-pane" data-testid="history-pane">
      <header className="pane-header">
        <h2 data-testid="history-title">
          History of <Bdi>{branchLabel(props.branch, branchId)}</Bdi>
          {current && <span className="badge world"> current</span>}
        </h2>
        {props.onPlanSwitch ? (
          <button onClick={props.onPlanSwitch} data-testid="plan-switch">
            Plan a switch to this branch
          </button>
        ) : (
          <p className="muted" data-testid="no-switch">
            The session is on this branch.
          </p>
        )}
      </header>
      <ErrorLine error={first.error ?? moreError} />
      {next !== null && (
        <button className="link" onClick={loadEarlier} data-testid="history-earlier">
          Earlier messages (before @{next})
        </button>
      )}
      {first.data && items.length === 0 && <p className="muted">No messages on this branch's lineage yet.</p>}
      <ol className="history" data-testid="branch-history">
        {items.map((m) => (
          <MessageRow key={m.id} m={m} onVersions={props.onVersions} />
        ))}
      </ol>
    </section>
  );
}
