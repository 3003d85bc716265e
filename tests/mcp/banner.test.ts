// What `forkpoint mcp` prints when it starts: the owner, the workspace and the database are anyone's text, so they
// are escaped as the CLI escapes what it prints (a terminal never acts on them), over stdio and over HTTP.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { makeTempDir, removeDir } from "../helpers.js";
import { childEnv, mcpArgs, startHttp, type HttpChild } from "./fixture.js";

let root: string;
let ws: string;
let db: string;
let http: HttpChild | undefined;

/** A name holding what a terminal acts on: an escape sequence, a bidi override, a newline. */
const HOSTILE = "a\u001b[31mb\u202ec\nd";
const ESCAPED = "a\\x1b[31mb\\u202ec\\nd";

beforeEach(() => {
  root = makeTempDir("forkpoint-mcp-banner-");
  ws = path.join(root, `project-${HOSTILE}`);
  db = path.join(root, "forkpoint.db");
  fs.mkdirSync(ws);
});
afterEach(async () => {
  await http?.stop();
  http = undefined;
  removeDir(root);
});

/** Nothing a terminal acts on: no escape, no bidi control, and no line break inside a line. */
const RAW = /[\u001b\u202e]/;

describe("the banner", () => {
  it("escapes the user and the workspace over stdio (stderr)", () => {
    const r = spawnSync(process.execPath, mcpArgs(["--workspace", ws, "--db", db, "--user", `u-${HOSTILE}`]), {
      encoding: "utf8",
      env: childEnv({ XDG_DATA_HOME: path.join(root, "data") }),
      input: "",
    });
    const banner = r.stderr.split("\n").find((l) => l.includes("serving on stdio"))!;
    expect(banner).toContain(`(user u-${ESCAPED})`);
    expect(banner).toContain(`project-${ESCAPED}`);
    expect(r.stderr).not.toMatch(RAW);
  });

  it("escapes FORKPOINT_USER and the workspace over HTTP (stdout)", async () => {
    http = await startHttp(["--workspace", ws, "--db", db], { XDG_DATA_HOME: path.join(root, "data"), FORKPOINT_USER: `e-${HOSTILE}` });
    // The lines after the URL and the token may come a moment later.
    const banner = await vi.waitFor(() => {
      const line = http!
        .output()
        .split("\n")
        .find((l) => l.startsWith("session "));
      expect(line).toBeDefined();
      return line!;
    });
    expect(banner).toContain(`(user e-${ESCAPED})`);
    expect(banner).toContain(`project-${ESCAPED}`);
    expect(http.output()).not.toMatch(RAW);
  });
});
