// Vitest global setup: the run's temp dir (TMPDIR, which os.tmpdir() reads in this process, the workers and their
// children) in memory where it can be: SQLite files, workspaces and the compiled tree then cost no disk I/O, which on a
// shared machine stalls file creation and removal for tens of milliseconds each. Removed when the run ends;
// FORKPOINT_TEST_DISK_TMPDIR=1 keeps the usual temp dir.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** /dev/shm when it is a writable memory file system with room, as for the PostgreSQL cluster (tests/fixtures/postgres-server.ts). */
function memoryParent(): string | undefined {
  const shm = "/dev/shm";
  try {
    fs.accessSync(shm, fs.constants.W_OK);
    const { bavail, bsize } = fs.statfsSync(shm);
    return bavail * bsize >= 2 ** 30 ? shm : undefined;
  } catch {
    return undefined;
  }
}

export default function setup() {
  const parent = memoryParent();
  if (!parent || process.env.FORKPOINT_TEST_DISK_TMPDIR) return;
  const dir = fs.mkdtempSync(path.join(parent, "forkpoint-tmp-"));
  // Like /tmp: children run as another user (tests/reliability/corruption.test.ts) reach it too.
  fs.chmodSync(dir, 0o1777);
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    fs.rmSync(dir, { recursive: true, force: true });
  };
}
