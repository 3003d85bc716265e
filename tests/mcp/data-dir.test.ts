// Where forkpoint mcp keeps its database when given none: the user's data directory, by the platform's convention.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { defaultDatabasePath } from "../../src/mcp/data-dir.js";

describe("defaultDatabasePath", () => {
  it("is $XDG_DATA_HOME/forkpoint/forkpoint.db when that is an absolute path", () => {
    expect(defaultDatabasePath({ XDG_DATA_HOME: "/data", HOME: "/home/a" }, "linux")).toBe(path.join("/data", "forkpoint", "forkpoint.db"));
    expect(defaultDatabasePath({ XDG_DATA_HOME: "/data", HOME: "/Users/a" }, "darwin")).toBe(
      path.join("/data", "forkpoint", "forkpoint.db"),
    );
  });

  it("falls back to the platform's place for application data (a relative XDG_DATA_HOME is ignored)", () => {
    expect(defaultDatabasePath({ HOME: "/home/a" }, "linux")).toBe(path.join("/home/a", ".local", "share", "forkpoint", "forkpoint.db"));
    expect(defaultDatabasePath({ HOME: "/home/a", XDG_DATA_HOME: "rel" }, "freebsd")).toBe(
      path.join("/home/a", ".local", "share", "forkpoint", "forkpoint.db"),
    );
    expect(defaultDatabasePath({ HOME: "/Users/a" }, "darwin")).toBe(
      path.join("/Users/a", "Library", "Application Support", "forkpoint", "forkpoint.db"),
    );
    expect(defaultDatabasePath({ HOME: "/h", LOCALAPPDATA: "/appdata" }, "win32")).toBe(path.join("/appdata", "forkpoint", "forkpoint.db"));
  });
});
