// Cursors are opaque and checked: each pages only the listing that made it, and a forged or damaged one is a
// ValidationError on field "cursor"; genuine ones page every listing completely, newest first.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ValidationError, type Forkpoint, type Page, type SessionHandle } from "../../src/index.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { dumpOf, openForkpoint } from "../fixtures/backend.js";

let dir: string;
let fp: Forkpoint;
let file: string;
let s: SessionHandle;
let cursors: { sessions: string; checkpoints: string; timeline: string };

/** A token as a cursor is written: base64url of its JSON. */
const token = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

async function allPages<T>(list: (cursor: string | null) => Promise<Page<T>>): Promise<T[]> {
  const out: T[] = [];
  for (let cursor: string | null = null; ;) {
    const page: Page<T> = await list(cursor);
    out.push(...page.items);
    if (page.nextCursor === null) return out;
    cursor = page.nextCursor;
  }
}

beforeAll(async () => {
  dir = makeTempDir("forkpoint-cursors-");
  file = path.join(dir, "cursors.db");
  fp = openForkpoint({ path: file });
  for (let i = 0; i < 4; i++) await fp.createSession({ userId: "alice", title: `s${i}` });
  s = await fp.createSession({ userId: "alice", title: "main" });
  for (let i = 0; i < 5; i++) {
    await s.append({ role: "user", content: `m${i}` });
    await s.checkpoint({ name: i % 2 === 0 ? "even" : "odd" });
  }
  cursors = {
    sessions: (await fp.listSessions({ userId: "alice", limit: 2 })).nextCursor!,
    checkpoints: (await fp.listCheckpoints({ userId: "alice", limit: 2 })).nextCursor!,
    timeline: (await s.timeline({ limit: 2 })).nextCursor!,
  };
});

afterAll(async () => {
  await fp.close();
  removeDir(dir);
});

describe("genuine cursors page every listing completely", () => {
  it("sessions, checkpoints (all, filtered, of one session) and the timeline, each item once, newest first", async () => {
    const sessions = await allPages((cursor) => fp.listSessions({ userId: "alice", limit: 2, cursor }));
    expect(sessions.map((x) => x.title)).toEqual(["main", "s3", "s2", "s1", "s0"]);
    const checkpoints = await allPages((cursor) => fp.listCheckpoints({ userId: "alice", limit: 2, cursor }));
    expect(checkpoints.map((c) => c.name)).toEqual(["even", "odd", "even", "odd", "even"]);
    const even = await allPages((cursor) => s.listCheckpoints({ name: "even", limit: 1, cursor }));
    expect(even.map((c) => c.id)).toEqual(checkpoints.filter((c) => c.name === "even").map((c) => c.id));
    const timeline = await allPages((cursor) => s.timeline({ limit: 3, cursor }));
    expect(timeline.map((t) => t.kind)).toEqual(Array.from({ length: 5 }, () => ["checkpoint", "message"]).flat());
    expect(new Set(timeline.map((t) => t.id)).size).toBe(10);
  });

  it("a checkpoints cursor pages the same user's checkpoints whatever the filters (they never change the order)", async () => {
    const page = await s.listCheckpoints({ name: "odd", cursor: cursors.checkpoints });
    const all = await allPages((cursor) => fp.listCheckpoints({ userId: "alice", limit: 2, cursor }));
    expect(page.items.map((c) => c.id)).toEqual(
      all
        .slice(2)
        .filter((c) => c.name === "odd")
        .map((c) => c.id),
    );
  });

  it("null and an omitted cursor are the first page", async () => {
    expect((await fp.listSessions({ userId: "alice", cursor: null })).items).toHaveLength(5);
    expect((await s.timeline({ cursor: null })).items).toHaveLength(10);
  });
});

describe("a cursor pages only the listing that made it", () => {
  const misuse: [string, () => Promise<unknown>][] = [
    ["a sessions cursor given to listCheckpoints", () => fp.listCheckpoints({ userId: "alice", cursor: cursors.sessions })],
    ["a sessions cursor given to a timeline", () => s.timeline({ cursor: cursors.sessions })],
    ["a checkpoints cursor given to listSessions", () => fp.listSessions({ userId: "alice", cursor: cursors.checkpoints })],
    ["a checkpoints cursor given to a timeline", () => s.timeline({ cursor: cursors.checkpoints })],
    ["a timeline cursor given to listSessions", () => fp.listSessions({ userId: "alice", cursor: cursors.timeline })],
    ["a timeline cursor given to a session's listCheckpoints", () => s.listCheckpoints({ cursor: cursors.timeline })],
  ];
  for (const [what, call] of misuse) {
    it(what, async () => {
      const e = await rejectionOf(call);
      expect(e).toBeInstanceOf(ValidationError);
      expect(e).toMatchObject({ code: "VALIDATION_ERROR", field: "cursor" });
      expect(e.message).toContain("another listing");
    });
  }
});

describe("a forged or damaged cursor is a ValidationError on field cursor, and nothing changes", () => {
  const rowids: [string, unknown][] = [
    ["a bare key of an earlier format", [5]],
    ["a huge number", ["s", 1e308]],
    ["a negative rowid", ["s", -5]],
    ["a fractional rowid", ["s", 1.5]],
    ["rowid 0", ["s", 0]],
    ["an unsafe integer", ["s", 2 ** 53]],
    ["a string rowid", ["s", "5"]],
    ["null as rowid", ["s", null]],
    ["an extra key", ["s", 5, 6]],
    ["no key", ["s"]],
    ["an unknown tag", ["x", 5]],
    ["an object", { s: 5 }],
  ];
  for (const [what, value] of rowids) {
    it(`listSessions: ${what}`, async () => {
      const e = await rejectionOf(() => fp.listSessions({ userId: "alice", cursor: token(value) }));
      expect(e).toBeInstanceOf(ValidationError);
      expect(e).toMatchObject({ code: "VALIDATION_ERROR", field: "cursor" });
    });
    it(`listCheckpoints: ${what}`, async () => {
      const forged = Array.isArray(value) && value[0] === "s" ? ["c", ...value.slice(1)] : value;
      const e = await rejectionOf(() => fp.listCheckpoints({ userId: "alice", cursor: token(forged) }));
      expect(e).toMatchObject({ code: "VALIDATION_ERROR", field: "cursor" });
    });
  }

  const timelines: [string, unknown[]][] = [
    ["a negative time", ["t", -1, "entry", 3]],
    ["a time past what a Date holds", ["t", 1e300, "entry", 3]],
    ["an unknown source", ["t", 1_700_000_000_000, "sessions", 3]],
    ["a fractional rowid", ["t", 1_700_000_000_000, "entry", 2.5]],
    ["a negative rowid", ["t", 1_700_000_000_000, "entry", -1]],
    ["a string time", ["t", "1700000000000", "entry", 3]],
    ["a missing part", ["t", 1_700_000_000_000, "entry"]],
  ];
  for (const [what, value] of timelines) {
    it(`timeline: ${what}`, async () => {
      const e = await rejectionOf(() => s.timeline({ cursor: token(value) }));
      expect(e).toMatchObject({ code: "VALIDATION_ERROR", field: "cursor" });
    });
  }

  const garbage: [string, string][] = [
    ["an empty string", ""],
    ["not base64", "%%%"],
    ["base64 of no JSON", Buffer.from("not json").toString("base64url")],
    ["a genuine cursor with padding added", `${Buffer.from('["s",3]').toString("base64")}=`],
    ["a genuine cursor with a character inserted", ""],
    ["a very long token", "A".repeat(100_000)],
  ];
  for (const [what, value] of garbage) {
    it(`any listing: ${what}`, async () => {
      const cursor = what.includes("inserted") ? `${cursors.sessions.slice(0, 4)}!${cursors.sessions.slice(4)}` : value;
      const before = await dumpOf(file);
      for (const call of [
        () => fp.listSessions({ userId: "alice", cursor }),
        () => fp.listCheckpoints({ userId: "alice", cursor }),
        () => s.timeline({ cursor }),
      ]) {
        const e = await rejectionOf(call);
        expect(e).toBeInstanceOf(ValidationError);
        expect(e).toMatchObject({ code: "VALIDATION_ERROR", field: "cursor" });
      }
      expect(await dumpOf(file)).toEqual(before);
    });
  }
});

describe("the users listing's cursor is checked in full like the others", () => {
  it("a genuine one pages every user once, astral and maximal ids included", async () => {
    const longest = "😀".repeat(512);
    for (const userId of ["zed", longest, "ünïcode", "x y"]) await fp.createSession({ userId });
    const users = await allPages((cursor) => fp.listUsers({ limit: 1, cursor }));
    expect(users.map((u) => u.userId)).toEqual(["alice", "x y", "zed", "ünïcode", longest]);
  });

  // A users cursor holds a user id: text the API would refuse as a userId is refused as a cursor too.
  const forged: [string, unknown][] = [
    ["a lone surrogate as the id", ["u", "a\ud800"]],
    ["an empty id", ["u", ""]],
    ["an id with surrounding spaces", ["u", " alice "]],
    ["an id longer than any userId", ["u", "x".repeat(513)]],
    ["a very long id", ["u", "x".repeat(100_000)]],
    ["a number as the id", ["u", 5]],
    ["an extra key", ["u", "alice", "bob"]],
    ["a sessions cursor", ["s", 5]],
  ];
  for (const [what, value] of forged) {
    it(what, async () => {
      const e = await rejectionOf(() => fp.listUsers({ cursor: token(value) }));
      expect(e).toBeInstanceOf(ValidationError);
      expect(e).toMatchObject({ code: "VALIDATION_ERROR", field: "cursor" });
    });
  }

  it("a users cursor pages no other listing", async () => {
    const users = (await fp.listUsers({ limit: 1 })).nextCursor!;
    for (const call of [() => fp.listSessions({ userId: "alice", cursor: users }), () => s.timeline({ cursor: users })]) {
      expect(await rejectionOf(call)).toMatchObject({ code: "VALIDATION_ERROR", field: "cursor" });
    }
  });
});

describe("only the exact text a listing wrote is a cursor", () => {
  // Same key, other JSON text: a hand-made token, not one forkpoint wrote.
  const respelt: [string, string][] = [
    ["spaces in its JSON", ' [ "s", 3 ]'],
    ["an exponent", '["s",3e0]'],
    ["a negative zero time", '["t",-0,"entry",3]'],
    ["an escaped tag", '["\\u0073",3]'],
  ];
  for (const [what, json] of respelt) {
    it(what, async () => {
      const cursor = Buffer.from(json).toString("base64url");
      const call = json.includes('"t"') ? () => s.timeline({ cursor }) : () => fp.listSessions({ userId: "alice", cursor });
      expect(await rejectionOf(call)).toMatchObject({ code: "VALIDATION_ERROR", field: "cursor" });
    });
  }
});
