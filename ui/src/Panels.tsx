// The side panels: a checkpoint's state, history and tool track; a message's versions; two checkpoints' diff; a move's plan.
import { useEffect, useRef, useState, type ReactNode } from "react";
import { api, isAbort } from "./api";
import { Bdi, isolate } from "./bidi";
import type { Checkpoint, CheckpointDiff, Json, Message, MovePlan, Page, ToolInvocation } from "./types";
import { useLoad } from "./useLoad";

// Everything users store is shown isolated (<Bdi>, or `isolate` inside built strings): a bidi control in it (U+202E
// opened and never closed) reorders only that text, never the page's own around it. React escapes it when it renders.

/** A JSON value as indented JSON (as JSON.stringify(v, null, 2) writes it), each key and string isolated. */
function JsonText({ value }: { value: Json }) {
  const out: ReactNode[] = [];
  // The quotes stay outside the isolate: an override in the text reverses the text alone, not its closing quote.
  const str = (s: string) => out.push('"', <Bdi key={out.length}>{JSON.stringify(s).slice(1, -1)}</Bdi>, '"');
  const walk = (v: Json, indent: string): void => {
    if (typeof v === "string") return void str(v);
    if (v === null || typeof v !== "object") return void out.push(JSON.stringify(v));
    const items: [string | null, Json][] = Array.isArray(v) ? v.map((x) => [null, x]) : Object.entries(v);
    const [open, close] = Array.isArray(v) ? ["[", "]"] : ["{", "}"];
    if (items.length === 0) return void out.push(open + close);
    out.push(`${open}\n`);
    items.forEach(([key, item], i) => {
      out.push(`${indent}  `);
      if (key !== null) {
        str(key);
        out.push(": ");
      }
      walk(item, `${indent}  `);
      out.push(i < items.length - 1 ? ",\n" : "\n");
    });
    out.push(indent + close);
  };
  walk(value, "");
  return <>{out}</>;
}

/** A stored JSON value: a string as it is, anything else as indented JSON; isolated either way. */
export function Text({ value }: { value: Json }) {
  return typeof value === "string" ? <Bdi>{value}</Bdi> : <JsonText value={value} />;
}
const path = (p: string[]) => (p.length === 0 ? "(the whole state)" : <Bdi>{p.join(".")}</Bdi>);

export function ErrorLine({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      <Bdi>{error instanceof Error ? error.message : String(error)}</Bdi>
    </p>
  );
}

export function Tools({ tools, testid }: { tools: ToolInvocation[]; testid: string }) {
  if (tools.length === 0) return <p className="muted">none</p>;
  return (
    <ul className="tools" data-testid={testid}>
      {tools.map((t) => (
        <li key={t.id}>
          <b>
            <Bdi>{t.tool}</Bdi>
          </b>{" "}
          <span className="muted">@{t.position}</span> <span className={`badge ${t.status}`}>{t.status}</span>{" "}
          {t.applied ? <span className="badge world">applied</span> : <span className="badge">not applied</span>}
          <pre>
            <Text value={t.args} />
          </pre>
        </li>
      ))}
    </ul>
  );
}

function MessageRow({ m, onVersions }: { m: Message; onVersions: (id: string) => void }) {
  return (
    <li className="message" data-role={m.role}>
      <Bdi className="role">{m.role}</Bdi>{" "}
      <span className="content">
        <Text value={m.content} />
      </span>{" "}
      <button className="link" onClick={() => onVersions(m.id)} title="versions of this message">
        versions
      </button>
    </li>
  );
}

export function CheckpointPanel(props: {
  user: string;
  session: string;
  checkpoint: Checkpoint;
  onVersions: (id: string) => void;
  onPlan: () => void;
}) {
  const { user, session, checkpoint } = props;
  const { data: restored, error } = useLoad(
    (signal) => api.checkpoint(user, session, checkpoint.id, signal),
    [user, session, checkpoint.id],
  );
  return (
    <section data-testid="checkpoint-panel">
      <h2>
        Checkpoint <Bdi>{checkpoint.name ?? checkpoint.id.slice(-6)}</Bdi> <span className="muted">at {checkpoint.position}</span>
      </h2>
      <button onClick={props.onPlan} data-testid="plan-rollback">
        Plan a rollback here
      </button>
      <ErrorLine error={error} />
      {restored && (
        <>
          <h3>State</h3>
          <pre data-testid="checkpoint-state">
            <Text value={restored.state} />
          </pre>
          <h3>History ({restored.history.length})</h3>
          <ol className="history" data-testid="checkpoint-history">
            {restored.history.map((m) => (
              <MessageRow key={m.id} m={m} onVersions={props.onVersions} />
            ))}
          </ol>
          <h3>Tool track ({restored.toolTrack.length})</h3>
          <Tools tools={restored.toolTrack} testid="checkpoint-tools" />
        </>
      )}
    </section>
  );
}

export function VersionsPanel(props: { user: string; session: string; messageId: string; onClose: () => void }) {
  const { data: v, error } = useLoad(
    (signal) => api.versions(props.user, props.session, props.messageId, signal),
    [props.user, props.session, props.messageId],
  );
  const [at, setAt] = useState(0);
  useEffect(() => setAt(v?.index ?? 0), [v]);
  const shown = v?.versions[at];
  return (
    <section data-testid="versions-panel">
      <h2>
        Message versions{" "}
        <button className="link" onClick={props.onClose}>
          close
        </button>
      </h2>
      <ErrorLine error={error} />
      {v && shown && (
        <>
          <div className="pager">
            <button disabled={at === 0} onClick={() => setAt(at - 1)} aria-label="previous version">
              &lt;
            </button>
            <span data-testid="versions-index">
              {at + 1}/{v.count}
            </span>
            <button disabled={at === v.count - 1} onClick={() => setAt(at + 1)} aria-label="next version">
              &gt;
            </button>
          </div>
          <p className="message">
            <Bdi className="role">{shown.message.role}</Bdi>{" "}
            <span data-testid="versions-content">
              <Text value={shown.message.content} />
            </span>
          </p>
          <p className="muted">on branch {shown.branchId.slice(-6)}</p>
        </>
      )}
    </section>
  );
}

/** A checkpoint as a picker names it: its name (or the end of its id) and position. */
const label = (c: Checkpoint) => `${isolate(c.name ?? c.id.slice(-6))} @${c.position}`;

/** Stored names (tools, files) as one list, each isolated. */
const names = (list: string[]) => (list.length === 0 ? "none" : list.map(isolate).join(", "));

/** A picker of the session's checkpoints (one side of a diff). */
function CheckpointSelect(props: { checkpoints: Checkpoint[]; value: string; onChange: (id: string) => void; testid: string }) {
  return (
    <select value={props.value} onChange={(e) => props.onChange(e.target.value)} data-testid={props.testid}>
      {props.checkpoints.map((c) => (
        <option key={c.id} value={c.id}>
          {label(c)}
        </option>
      ))}
    </select>
  );
}

export function DiffPanel(props: { user: string; session: string; checkpoints: Checkpoint[]; initialA: string | undefined }) {
  const { checkpoints } = props;
  const [a, setA] = useState(props.initialA ?? checkpoints[0]?.id ?? "");
  const [b, setB] = useState(checkpoints[1]?.id ?? checkpoints[0]?.id ?? "");
  const [diff, setDiff] = useState<CheckpointDiff | null>(null);
  const [error, setError] = useState<unknown>(null);
  const running = useRef<AbortController | null>(null);
  useEffect(() => {
    if (props.initialA) setA(props.initialA);
  }, [props.initialA]);
  useEffect(() => () => running.current?.abort(), []);
  const run = () => {
    // A second click before the first answer: only the second one's diff is shown.
    running.current?.abort();
    const controller = (running.current = new AbortController());
    setError(null);
    setDiff(null);
    api.diff(props.user, props.session, a, b, controller.signal).then(setDiff, (e: unknown) => isAbort(e) || setError(e));
  };
  return (
    <section data-testid="diff-panel">
      <h2>Diff two checkpoints</h2>
      <label>
        A <CheckpointSelect checkpoints={checkpoints} value={a} onChange={setA} testid="diff-a" />
      </label>{" "}
      <label>
        B <CheckpointSelect checkpoints={checkpoints} value={b} onChange={setB} testid="diff-b" />
      </label>{" "}
      <button onClick={run} data-testid="diff-run">
        Diff
      </button>
      <ErrorLine error={error} />
      {diff && (
        <div data-testid="diff-result">
          <h3>State</h3>
          <ul>
            {diff.state.added.map((d, i) => (
              <li key={`a${i}`} className="added">
                + {path(d.path)}: <Text value={d.value} />
              </li>
            ))}
            {diff.state.removed.map((d, i) => (
              <li key={`r${i}`} className="removed">
                − {path(d.path)}: <Text value={d.value} />
              </li>
            ))}
            {diff.state.changed.map((d, i) => (
              <li key={`c${i}`} className="changed">
                ~ {path(d.path)}: <Text value={d.from} /> → <Text value={d.to} />
              </li>
            ))}
          </ul>
          <h3>Messages</h3>
          <p>
            {diff.messages.common} in common; only in A: {diff.messages.onlyA.length}, only in B: {diff.messages.onlyB.length}
          </p>
          <ul>
            {diff.messages.onlyA.map((m) => (
              <li key={m.id} className="removed">
                A <Bdi>{m.role}</Bdi>: <Text value={m.content} />
              </li>
            ))}
            {diff.messages.onlyB.map((m) => (
              <li key={m.id} className="added">
                B <Bdi>{m.role}</Bdi>: <Text value={m.content} />
              </li>
            ))}
          </ul>
          <h3>Tools</h3>
          <p>
            {diff.tools.common} in common; only in A: {names(diff.tools.onlyA.map((t) => t.tool))}; only in B:{" "}
            {names(diff.tools.onlyB.map((t) => t.tool))}
          </p>
          <h3>Files</h3>
          {diff.files ? (
            <p>
              added: {names(diff.files.added)}; modified: {names(diff.files.modified)}; deleted: {names(diff.files.deleted)}
            </p>
          ) : (
            <p className="muted">no files to compare (no workspace, or a checkpoint that holds none)</p>
          )}
        </div>
      )}
    </section>
  );
}

export function CheckpointList(props: {
  user: string;
  session: string;
  generation: number;
  label: (branchId: string) => string;
  selected: string | undefined;
  onSelect: (c: Checkpoint) => void;
  /** Every checkpoint loaded so far, for the diff's pickers. */
  onLoaded: (checkpoints: Checkpoint[]) => void;
}) {
  const { user, session } = props;
  const first = useLoad((signal) => api.checkpoints(user, session, undefined, signal), [user, session, props.generation]);
  const [more, setMore] = useState<Page<Checkpoint> | null>(null);
  const [error, setError] = useState<unknown>(null);
  // A page asked for before the list was read again is dropped with it.
  const running = useRef<AbortController | null>(null);
  useEffect(() => {
    setMore(null);
    setError(null);
    return () => running.current?.abort();
  }, [first.data]);
  const items = [...(first.data?.items ?? []), ...(more?.items ?? [])];
  const next = more ? more.nextCursor : (first.data?.nextCursor ?? null);
  useEffect(() => props.onLoaded(items), [first.data, more]);
  const loadMore = () => {
    if (!next) return;
    running.current?.abort();
    running.current = new AbortController();
    api.checkpoints(user, session, next, running.current.signal).then(
      (page) => setMore((prev) => ({ items: [...(prev?.items ?? []), ...page.items], nextCursor: page.nextCursor })),
      (e: unknown) => isAbort(e) || setError(e),
    );
  };
  return (
    <section>
      <ErrorLine error={first.error ?? error} />
      <ul className="list" data-testid="checkpoint-list">
        {items.map((c) => (
          <li key={c.id}>
            <button className={`link${props.selected === c.id ? " selected" : ""}`} onClick={() => props.onSelect(c)}>
              <Bdi>{c.name ?? c.id.slice(-6)}</Bdi>
            </button>{" "}
            <span className="muted">
              @{c.position} on <Bdi>{props.label(c.branchId)}</Bdi>
            </span>
          </li>
        ))}
        {first.data && items.length === 0 && <li className="muted">no checkpoints</li>}
      </ul>
      {next && (
        <button onClick={loadMore} data-testid="checkpoints-more">
          More checkpoints
        </button>
      )}
    </section>
  );
}
