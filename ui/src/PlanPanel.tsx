// The move-plan panel: what a rollback or switch would undo and replay, and the move itself, refused if the session
// moved since the plan (its `ifAt`).
import { useEffect, useRef, useState } from "react";
import { api, ApiError } from "./api";
import { Bdi } from "./bidi";
import { ErrorLine, Tools } from "./Panels";
import { useLoad } from "./useLoad";

export interface MoveTarget {
  kind: "rollback" | "switch";
  id: string;
  label: string;
}

export function PlanPanel(props: {
  user: string;
  session: string;
  target: MoveTarget;
  allowWrites: boolean;
  onMoved: () => void;
  /** "Plan again" after the session moved since the plan: what else shows the session is stale too. */
  onReplan: () => void;
}) {
  const { user, session, target } = props;
  // Bumped by "Plan again": the plan read anew, where the session is now.
  const [attempt, setAttempt] = useState(0);
  const { data: plan, error: planError } = useLoad(
    (signal) => api.plan(user, session, target.kind === "rollback" ? { checkpointId: target.id } : { branchId: target.id }, signal),
    [user, session, target.kind, target.id, attempt],
  );
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  // A move under way: the button is disabled until it answers (a double click sends one move, not two).
  const [busy, setBusy] = useState(false);
  const inFlight = useRef(false);
  useEffect(() => {
    setError(null);
    setDone(null);
  }, [user, session, target.kind, target.id, attempt]);
  const perform = () => {
    if (!plan || inFlight.current) return;
    inFlight.current = true;
    setBusy(true);
    setError(null);
    // The move confirmed is the one planned: sent with where the session was at the plan, refused if it moved since.
    const move =
      target.kind === "rollback" ? api.rollback(user, session, target.id, plan.at) : api.switch(user, session, target.id, plan.at);
    move
      .then((r) => {
        const files = plan.workspace ? "; workspace files left as they are" : "";
        setDone(`Done: now on branch ${r.branch.id.slice(-6)} (${r.undone.length} undone, ${r.replayed.length} replayed${files})`);
        props.onMoved();
      }, setError)
      .finally(() => {
        inFlight.current = false;
        setBusy(false);
      });
  };
  const moved = error instanceof ApiError && error.code === "SESSION_MOVED";
  // Skipped calls applied here stay applied; one that is not (a clone's or an import's, or an irreversible call never
  // applied here) is left unapplied: not replayed, whatever its tool can undo.
  const stays = plan ? plan.skipped.filter((t) => t.applied) : [];
  const notReplayed = plan ? plan.skipped.filter((t) => !t.applied) : [];
  return (
    <section data-testid="plan-panel">
      <h2>
        Plan: {target.kind} to <Bdi>{target.label}</Bdi>
      </h2>
      {moved ? (
        <p className="error" role="alert" data-testid="plan-stale">
          The session changed since this plan (another tab or server wrote to it): nothing was done. Plan again to see what the{" "}
          {target.kind} would do now.{" "}
          <button
            onClick={() => {
              setAttempt((a) => a + 1);
              props.onReplan();
            }}
            data-testid="plan-again"
          >
            Plan again
          </button>
        </p>
      ) : (
        <ErrorLine error={planError ?? error} />
      )}
      {error instanceof ApiError && error.stopped && (
        <div data-testid="move-stopped">
          <p>
            Stopped: the session did not move, but the {target.kind} had undone {error.stopped.undone.length} and replayed{" "}
            {error.stopped.replayed.length} call(s) before the failure. Performing it again continues from there.
          </p>
          {error.stopped.undone.length > 0 && (
            <>
              <h3>Undone before the failure ({error.stopped.undone.length})</h3>
              <Tools tools={error.stopped.undone} testid="stopped-undone" />
            </>
          )}
          {error.stopped.replayed.length > 0 && (
            <>
              <h3>Replayed before the failure ({error.stopped.replayed.length})</h3>
              <Tools tools={error.stopped.replayed} testid="stopped-replayed" />
            </>
          )}
        </div>
      )}
      {plan && (
        <>
          <p data-testid="plan-where">
            The world would be at position {plan.branch.position}
            {plan.branch.id ? ` on branch ${plan.branch.id.slice(-6)} (no branch is made)` : ", on a new branch"}.
          </p>
          {plan.workspace && (
            <p className="muted" data-testid="plan-files">
              Files: this {target.kind} moves the conversation and runs its tools' undo and replay; it leaves the files of the workspace{" "}
              <Bdi>{plan.workspace}</Bdi> as they are otherwise. To move them with it, use the CLI (<code>--scope both</code>) or the MCP
              server&apos;s rollback.
            </p>
          )}
          <h3>Undone ({plan.undone.length})</h3>
          <Tools tools={plan.undone} testid="plan-undone" />
          <h3>Replayed ({plan.replayed.length})</h3>
          <Tools tools={plan.replayed} testid="plan-replayed" />
          <h3>Skipped: irreversible, stays applied ({stays.length})</h3>
          <Tools tools={stays} testid="plan-skipped" />
          {notReplayed.length > 0 && (
            <>
              <h3>Not replayed: never ran in this database (a clone's or an import's), or irreversible ({notReplayed.length})</h3>
              <Tools tools={notReplayed} testid="plan-not-replayed" />
            </>
          )}
          {(plan.unregistered?.length ?? 0) > 0 && (
            <>
              <h3>Tool not loaded here, so the move is refused ({plan.unregistered!.length}): start the view with --tools</h3>
              <Tools tools={plan.unregistered!} testid="plan-unregistered" />
            </>
          )}
          {plan.unknown.length > 0 && (
            <>
              <h3>Unknown outcome ({plan.unknown.length})</h3>
              <Tools tools={plan.unknown} testid="plan-unknown" />
            </>
          )}
          {props.allowWrites ? (
            <button onClick={perform} disabled={done !== null || busy || moved} data-testid="perform-move">
              {target.kind === "rollback" ? "Roll back" : "Switch"}
            </button>
          ) : (
            <p className="muted" data-testid="read-only">
              Read-only: start forkpoint ui with --allow-writes to perform it.
            </p>
          )}
          {done && <p data-testid="move-done">{done}</p>}
        </>
      )}
    </section>
  );
}

/** The session's checkpoints, newest first, a page at a time: a session of 50,000 draws 50 until asked for more. */
