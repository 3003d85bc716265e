// object-rows: rows built in JS from raw tuples must be exactly what better-sqlite3's named rows would be.
import Database from "better-sqlite3";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { slice as pgSlice } from "../../src/store/postgres/columns.js";
import { slice, type Columns } from "../../src/store/sqlite/columns.js";
import { prepare } from "../../src/store/sqlite/object-rows.js";
import { makeTempDir, removeDir } from "../helpers.js";

let dir: string;
let db: Database.Database;
beforeEach(() => {
  dir = makeTempDir("forkpoint-object-rows-");
  db = new Database(path.join(dir, "rows.db"));
  db.exec(`CREATE TABLE a (id INTEGER PRIMARY KEY, name TEXT, data BLOB);
    CREATE TABLE b (id INTEGER PRIMARY KEY, a_id INTEGER, name TEXT);
    INSERT INTO a VALUES (1, 'one', x'0102'), (2, NULL, NULL);
    INSERT INTO b VALUES (10, 1, 'ten'), (20, 1, 'twenty');`);
});
afterEach(() => {
  db.close();
  removeDir(dir);
});

const QUERIES = [
  "SELECT * FROM a ORDER BY id",
  "SELECT id AS key, upper(name), data, 42 AS answer, NULL AS empty FROM a ORDER BY id",
  // duplicate names: the later column wins in both
  "SELECT a.*, b.* FROM a JOIN b ON b.a_id = a.id ORDER BY b.id",
  "SELECT a.id, b.name AS name, a.name AS name FROM a LEFT JOIN b ON b.a_id = a.id ORDER BY a.id, b.id",
];

describe("object rows", () => {
  it.each(QUERIES)("match better-sqlite3's named rows: %s", (sql) => {
    const named = db.prepare(sql);
    const ours = prepare(db, sql);
    expect(ours.all()).toEqual(named.all());
    expect(ours.get()).toEqual(named.get());
  });

  it("have the driver's keys in its order, whatever the column names", () => {
    const sql = `SELECT 1 AS "__proto__", 2 AS "it's", 3 AS "a""b\\c", 4 AS "7", 5 AS "x", 6 AS "x", 7 AS "}; throw 1; //"`;
    const named = db.prepare(sql).get() as object;
    const ours = prepare(db, sql).get() as object;
    expect(ours).toEqual(named);
    expect(Object.keys(ours)).toEqual(Object.keys(named));
    expect(Object.getPrototypeOf(ours)).toBe(Object.getPrototypeOf(named));
  });

  it("are filled key by key where code generation from strings is turned off, with the same keys and values", () => {
    // The driver's own named rows are built by generated code too: read before code generation is refused.
    const named = QUERIES.map((sql) => db.prepare(sql).all());
    vi.stubGlobal("Function", function refused() {
      throw new EvalError("Code generation from strings disallowed for this context");
    });
    try {
      QUERIES.forEach((sql, i) => expect(prepare(db, sql).all()).toEqual(named[i]));
      const cols: Columns = [
        ["$.id", "id"],
        ["$.name", "name"],
      ];
      expect(slice([7, 1, "one"], 1, cols)).toEqual({ id: 1, name: "one" });
      expect(slice([7, null, null], 1, cols)).toBeUndefined();
      expect(pgSlice([7, 1, "one"], 1, [...cols])).toEqual({ id: 1, name: "one" });
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it("give undefined for no row, an empty list for no rows, and bind parameters like the driver", () => {
    const ours = prepare(db, "SELECT id, name FROM a WHERE id = ? OR name = @name");
    expect(ours.get(3, { name: "none" })).toBeUndefined();
    expect(ours.all(3, { name: "none" })).toEqual([]);
    expect(ours.get(2, { name: "none" })).toEqual({ id: 2, name: null });
  });

  it("of a RETURNING write are objects too; other writes give the driver's run result", () => {
    expect(prepare(db, "DELETE FROM b WHERE id = ? RETURNING id, name").all(20)).toEqual([{ id: 20, name: "twenty" }]);
    expect(prepare(db, "INSERT INTO b (a_id, name) VALUES (?, ?)").run(2, "x")).toEqual({ changes: 1, lastInsertRowid: 11 });
  });

  it("follow a table's new columns in a statement over *", () => {
    const ours = prepare(db, "SELECT * FROM a WHERE id = 1");
    expect(Object.keys(ours.get() as object)).toEqual(["id", "name", "data"]);
    db.exec("ALTER TABLE a ADD COLUMN extra TEXT DEFAULT 'e'");
    expect(ours.get()).toEqual(db.prepare("SELECT * FROM a WHERE id = 1").get());
  });

  it("raw and pluck modes are chosen when preparing and stay as chosen", () => {
    expect(prepare(db, "SELECT id, name FROM a ORDER BY id", "raw").all()).toEqual([
      [1, "one"],
      [2, null],
    ]);
    const pluck = prepare(db, "SELECT name FROM a ORDER BY id", "pluck");
    expect(pluck.all()).toEqual(["one", null]);
    expect(pluck.get()).toBe("one");
    // Another statement of the same text is independent of the first.
    expect(prepare(db, "SELECT name FROM a ORDER BY id").get()).toEqual({ name: "one" });
  });
});
