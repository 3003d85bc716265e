// The paths a move's undos and replays write, as its drift checks read them (see `writtenPaths`): shared by the
// "conversation" move's drift check, `plan`, and a stopped move called again (own-changes.ts).
import type { ToolInvocation } from "../../models/types.js";
import type { Step, Tx, WorkspaceRow } from "../../store/port/index.js";
import type { NamedSeen } from "../workspace/created-since.js";
import { namedPaths, reaches } from "../workspace/named-paths.js";
import { newestSnapshot, type SnapshotOnLineage } from "../workspace/newest-snapshot.js";
import { replayedApplication } from "./replayed-application.js";

/**
 * A step of a call recorded with `recordToolCall` whose record says what the files held where its arguments name as it
 * was recorded (`files`; `reach`: those named paths, a folder reaching what is under it): its undo or replay writes
 * there. `claimed`: the paths a step before it writes, checked as that step's.
 */
export interface RecordedReach {
  reach: ReadonlySet<string>;
  files: ReadonlyMap<string, string | null>;
  undo: boolean;
  claimed: ReadonlySet<string>;
}

/** What `writtenPaths` finds (see there for each part). */
export interface WrittenPaths {
  writes: Set<string>;
  keep: Set<string>;
  expected: Map<string, string | null>;
  named: Map<string, NamedSeen[]>;
  recorded: RecordedReach[];
  lost: Map<string, string[]>;
  olderOver: Map<string, string[]>;
}

/**
 * The paths the steps write, in the order they run (undos, newest call first, then replays): those their calls' runs
 * changed. A call with no record of them (`recordToolCall`'s) names no path here: refusing every drifted file for it
 * would block the move over files it never touches (its own recorded write counts as drift). What the files held where
 * its arguments name as it was recorded, when kept, is `recorded` (see `recordedDrift`): the paths there are its, not a
 * later step's; without that record (an older database's, no workspace then) it is left out. An undo or a replay of a call whose run changed none (a delete of a missing file, a mkdir of
 * an empty folder) may write the paths its arguments name in the workspace (`namedPaths`): `named`, each with what
 * tells what was there as such a call ran (the files its run found there, as its record says; without one, the newest
 * checkpoint's files at or before it and forkpoint's last look), which `createdSince` weighs: a file made there by hand
 * since is drift it could destroy; a hand edit of a file that was there (a read tool's file) is not, nor is drift
 * elsewhere. `keep`: the paths
 * whose first writer found a hand edit there as its call's first run began (its record's `handEdited`): drift there is
 * that edit, not a save made after the call; an undo puts it back (kept), a replay applies its call over it again, as
 * its first run did. `expected`: those of them whose record says what the file holds if nothing changed it since (an
 * undo: what its call's run left there; a replay: the hand edit that run found, which its undo put back); they are
 * kept only while the file holds just that (older records keep them as they are). After a step with no record of its
 * paths too: a file it wrote then holds other than that, refused (or saved first when forced) rather than a save lost.
 * `lost`: paths where an undo puts back a hand edit its call found (a save no checkpoint holds) that a replay then
 * writes over, its call having found something else there, with the calls whose undos put one back there (newest
 * first): the save is not on disk before the move, so no checkpoint can keep it first (see `refuseLostSaves`).
 * `olderOver`: those of them an older call's undo writes over (its run found another hand edit there, which it puts
 * back: the later one, saved after that call, would go; or a recorded call's through a folder it names, recorded over
 * other content), as a "both" move refuses them too (it would keep the later one and take that undo's write back).
 * `held`: hand edits a stopped move's undos put back (path → the file id on disk), as if an undo before these put them back.
 */
export function* writtenPaths(
  tx: Tx,
  ws: WorkspaceRow,
  undos: readonly ToolInvocation[],
  replays: readonly ToolInvocation[],
  held: ReadonlyMap<string, string | null> = new Map(),
): Step<WrittenPaths> {
  const named = new Map<string, NamedSeen[]>();
  const recordedCalls: RecordedReach[] = [];
  // The paths a recorded call's arguments name as such: a step after it leaves them to its check. A file it reaches
  // through a named folder only (a shell's `cwd`) it may not have written: a step after it checks that one too.
  const recordedNamed = new Set<string>();
  const writes = new Set<string>();
  const keep = new Set<string>();
  const expected = new Map<string, string | null>();
  const lost = new Map<string, string[]>();
  const olderOver = new Map<string, string[]>();
  // The hand edit each path holds after the steps so far put it back (its id), with every call whose undo puts one back
  // there, newest first: a rewind to before the first keeps its hand edit, and each older one's is found after it.
  const putBack = new Map([...held].map(([path, id]) => [path, { id, calls: [] as string[] }]));
  const steps = [...undos.map((call) => ({ call, undo: true })), ...replays.map((call) => ({ call, undo: false }))];
  for (const { call, undo } of steps) {
    const paths = yield* tx.callPaths(call.id);
    if (paths === undefined) {
      const files = yield* tx.recordedFiles(call.id);
      if (files === undefined) continue;
      // A folder too big to list when it was recorded is left out, as before such records (see `withNamedFiles`).
      const reach = new Set(namedPaths(ws.dir, call.args).filter((path) => files.has(path)));
      if (reach.size === 0) continue;
      // Its undo writes over what a later call's undo put back in a file its arguments name as such: just what it was
      // recorded over, its own write (a later call found it as drift), which its replay makes again; other content (a
      // deletion keeps none) was made after it was recorded, a save no checkpoint holds that its undo would lose.
      // A file under a folder it names counts too (a shell's `cwd`): its undo may write there.
      for (const [path, held] of undo ? [...putBack] : []) {
        if (!reaches(reach, path)) continue;
        if (held.id !== files.get(path) && held.id !== null) {
          addLost(lost, path, held.calls);
          // Reached through a named folder only, the file may have held a hand edit as the call ran, which its undo
          // puts back: a "both" move would take that write back under the later one (a path named as such keeps it).
          if (!reach.has(path)) addLost(olderOver, path, held.calls);
        }
        putBack.delete(path);
      }
      // Its replay writes over a hand edit an undo of the move put back there, as another call's replay does.
      for (const [path, held] of undo ? [] : [...putBack]) {
        if (!reaches(reach, path)) continue;
        if (held.id !== null) addLost(lost, path, held.calls);
        putBack.delete(path);
      }
      const claimed = new Set([...writes, ...keep, ...expected.keys(), ...named.keys()]);
      recordedCalls.push({ reach, files, undo, claimed });
      for (const path of reach) recordedNamed.add(path);
      continue;
    }
    // Its undo (a mkdir's rm -r of a folder it made empty, which no snapshot holds) may write there as its replay may.
    if (paths.length === 0) {
      // Its replay writes over a hand edit an undo of the move put back where its arguments name, as another's does.
      const reach = undo ? new Set<string>() : new Set(namedPaths(ws.dir, call.args));
      for (const [path, held] of [...putBack]) {
        if (!reaches(reach, path)) continue;
        if (held.id !== null) addLost(lost, path, held.calls);
        putBack.delete(path);
      }
      // What its run found where its arguments name (see `withNamedFiles`): a file not among them was not there.
      const found = yield* tx.callOutputs(call.id);
      let at: SnapshotOnLineage | undefined | "unread" = "unread";
      for (const path of namedPaths(ws.dir, call.args)) {
        if (keep.has(path) || expected.has(path) || recordedNamed.has(path)) continue;
        let seen: NamedSeen[];
        if (found?.has(path)) seen = [new Set([...found].flatMap(([p, id]) => (id !== null && reaches(new Set([path]), p) ? [p] : [])))];
        else {
          // Not recorded (an older call, a folder too big to list): the files as of the newest snapshot and last look.
          if (at === "unread") at = yield* newestSnapshot(tx, ws.sessionId, call);
          seen = [ws.manifestId, ...(at ? [at.files.manifestId] : [])];
        }
        named.set(path, [...(named.get(path) ?? []), ...seen]);
      }
      continue;
    }
    // A call applied by a replay: its undo puts back what that replay found, the files a move left (see run-steps.ts).
    const row = undo ? yield* tx.getTool(call.id) : undefined;
    const first = !undo || !(yield* replayedApplication(tx, row!));
    const found = first ? new Set(yield* tx.callHandEdited(call.id)) : new Set();
    const recorded = yield* tx.callHandEditIds(call.id);
    const ids = first ? recorded : new Map();
    for (const path of paths) {
      const known = ids.get(path);
      // A later undo leaves a hand edit put back as it is (put-back.ts); a replay writes over it.
      const held = putBack.get(path);
      if (undo && known !== undefined && held === undefined) putBack.set(path, { id: known.found, calls: [call.id] });
      // An older call's undo puts back the hand edit its own run found there, over the later one put back: content
      // other than what that older call left (a deletion keeps none) was saved after it ran, a save it would lose.
      if (undo && known !== undefined && held !== undefined && held.id !== known.left && held.id !== null) {
        addLost(lost, path, held.calls);
        addLost(olderOver, path, held.calls);
      }
      // The file holds that older hand edit from then on (as put-back.ts holds it): a later step weighs it, not the one before.
      if (undo && known !== undefined && held !== undefined) {
        held.calls.push(call.id);
        held.id = known.found;
      }
      // The undo of a replayed application puts back what the replay found: its first run's hand edit again, where a
      // rewind had put that back (see run-steps.ts), held as a first run's is; over a later one put back, the same loss.
      const again = undo && !first ? recorded.get(path) : undefined;
      if (
        again !== undefined &&
        again.found !== null &&
        held !== undefined &&
        held.id !== null &&
        held.id !== again.left &&
        held.id !== again.found
      ) {
        addLost(lost, path, held.calls);
        addLost(olderOver, path, held.calls);
        held.calls.push(call.id);
        held.id = again.found;
      }
      if (!undo && held !== undefined && held.id !== known?.found) addLost(lost, path, held.calls);
      if (!undo) putBack.delete(path);
      if (writes.has(path) || keep.has(path) || expected.has(path) || recordedNamed.has(path)) continue;
      if (known !== undefined) expected.set(path, undo ? known.left : known.found);
      // The undo of a replay's application over a hand edit: a file holding what the call's first run left there holds
      // the replay's doing (a replay applies the call over the same hand edit again), no save made since.
      else if (undo && recorded.has(path)) expected.set(path, recorded.get(path)!.left);
      else if (found.has(path)) keep.add(path);
      else writes.add(path);
    }
  }
  return { writes, keep, expected, named, recorded: recordedCalls, lost, olderOver };
}

/** Adds `calls` (newest first) to those `lost` names for `path`, each once. */
function addLost(lost: Map<string, string[]>, path: string, calls: readonly string[]): void {
  lost.set(path, [...new Set([...(lost.get(path) ?? []), ...calls])]);
}
