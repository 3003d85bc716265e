// forkpoint mcp --http listens on 127.0.0.1 only, and answers no request without its token, from another Host (DNS
// rebinding) or from another site's page (Origin), as forkpoint ui does.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempDir, removeDir } from "../helpers.js";
import { childEnv, connect, httpClient, mcpArgs, ok, startHttp, write, type HttpChild } from "./fixture.js";

let root: string;
let server: HttpChild;

beforeAll(async () => {
  root = makeTempDir("forkpoint-mcp-http-");
  const ws = path.join(root, "project");
  fs.mkdirSync(ws);
  write(ws, "a.txt", "one\n");
  server = await startHttp(["--workspace", ws, "--db", path.join(root, "fp.db"), "--user", "alice"]);
});
afterAll(async () => {
  await server?.stop();
  removeDir(root);
});

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

/** A raw POST of an initialize request (node:http, so that Host and Origin can be anything), answered status and body. */
function post(headers: Record<string, string>, pathname = "/mcp", payload = INITIALIZE): Promise<{ status: number; body: string }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port: url.port,
        path: pathname,
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      },
      (res) => {
        let body = "";
        res.on("data", (d: Buffer) => (body += d.toString()));
        res.on("end", () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

describe("forkpoint mcp --http", () => {
  it("listens on 127.0.0.1, at /mcp", () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(server.token.length).toBeGreaterThanOrEqual(32);
  });

  it("refuses a request without the token, or with another, before anything else", async () => {
    const host = { host: new URL(server.url).host };
    expect((await post(host)).status).toBe(401);
    expect((await post({ ...host, authorization: "Bearer wrong" })).status).toBe(401);
    expect((await post({ ...host, authorization: `Bearer ${server.token}x` })).status).toBe(401);
    expect((await post({ ...host, authorization: `Basic ${server.token}` })).status).toBe(401);
    expect((await post({ ...host }, "/other")).status).toBe(401);
    expect(JSON.parse((await post(host)).body)).toMatchObject({ jsonrpc: "2.0", error: { message: expect.stringContaining("token") } });
    // The official client without the token cannot connect either.
    await expect(httpClient(server.url, null)).rejects.toThrow();
    await expect(httpClient(server.url, "not the token")).rejects.toThrow();
  });

  it("refuses another Host or another site's Origin, even with the token", async () => {
    const auth = { authorization: `Bearer ${server.token}` };
    const port = new URL(server.url).port;
    expect((await post({ ...auth, host: `evil.example:${port}` })).status).toBe(403);
    expect((await post({ ...auth, host: "127.0.0.1" })).status).toBe(403);
    expect((await post({ ...auth, host: `127.0.0.1:${port}`, origin: "https://evil.example" })).status).toBe(403);
  });

  it("serves the tools with the token, in the header MCP clients send or forkpoint's own", async () => {
    const port = new URL(server.url).port;
    expect((await post({ host: `localhost:${port}`, authorization: `Bearer ${server.token}` })).status).toBe(200);
    expect((await post({ host: `127.0.0.1:${port}`, "x-forkpoint-token": server.token, origin: `http://127.0.0.1:${port}` })).status).toBe(
      200,
    );
    const client = await httpClient(server.url, server.token);
    try {
      expect((await ok(client, "checkpoint", { name: "over http" })).checkpoint.name).toBe("over http");
    } finally {
      await client.close();
    }
  });

  it("answers a request body over 4 MiB with 413, and serves the next", async () => {
    const headers = { host: new URL(server.url).host, authorization: `Bearer ${server.token}` };
    const big = JSON.stringify({ ...(JSON.parse(INITIALIZE) as object), padding: "x".repeat(4 * 1024 * 1024) });
    expect((await post(headers, "/mcp", big)).status).toBe(413);
    expect((await post(headers)).status).toBe(200);
  });

  it("takes the Bearer scheme in any case, as HTTP's schemes are", async () => {
    const host = { host: new URL(server.url).host };
    for (const scheme of ["bearer", "BEARER", "Bearer", "bEaReR"])
      expect((await post({ ...host, authorization: `${scheme} ${server.token}` })).status).toBe(200);
    expect((await post({ ...host, authorization: `bearer${server.token}` })).status).toBe(401);
  });
});

describe("FORKPOINT_MCP_TOKEN", () => {
  it("is refused with --http when it begins or ends with whitespace (a header cannot carry it), or is short", () => {
    const ws = path.join(root, "project");
    const start = (token: string, json = false) =>
      spawnSync(
        process.execPath,
        [...mcpArgs(["--workspace", ws, "--db", path.join(root, "token.db"), "--http"]), ...(json ? ["--json"] : [])],
        { encoding: "utf8", env: childEnv({ FORKPOINT_MCP_TOKEN: token }), timeout: 20_000 },
      );
    const long = "t".repeat(40);
    for (const token of [` ${long}`, `${long}\n`, `\t${long}`, " ".repeat(40)]) {
      const r = start(token);
      expect([r.status, r.stdout]).toEqual([2, ""]);
      expect(r.stderr).toMatch(/FORKPOINT_MCP_TOKEN must not begin or end with whitespace/);
    }
    const json = start(` ${long}`, true);
    expect([json.status, JSON.parse(json.stdout).error.code]).toEqual([2, "USAGE"]);
    expect(start("short").stderr).toMatch(/FORKPOINT_MCP_TOKEN must be at least 32 characters/);
  });

  it("is ignored over stdio, where there is no token to check", async () => {
    const ws = path.join(root, "project");
    const stdio = await connect("stdio", ["--workspace", ws, "--db", path.join(root, "stdio.db"), "--user", "alice"], {
      FORKPOINT_MCP_TOKEN: "short",
    });
    try {
      expect((await ok(stdio.client, "checkpoint", { name: "over stdio" })).checkpoint.name).toBe("over stdio");
    } finally {
      await stdio.close();
    }
  });
});
