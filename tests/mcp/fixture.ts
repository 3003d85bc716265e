// `forkpoint mcp` as a client meets it: the real binary in a child process (the run's compiled tree, else through tsx),
// driven by the official MCP SDK client over stdio, or over streamable HTTP with the token it printed.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { expect } from "vitest";
import { nodeArgs } from "../fixtures/compiled.js";
import { makeTempDir } from "../helpers.js";

export const MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
const repo = fileURLToPath(new URL("../..", import.meta.url));

export type Transport = "stdio" | "http";
export const TRANSPORTS: Transport[] = ["stdio", "http"];

/**
 * The data directory a child uses unless a test gives its own (XDG_DATA_HOME): where its start locks go, never the
 * runner's home.
 */
const TEST_DATA = path.join(os.tmpdir(), "forkpoint-mcp-tests-data");

/** The child's environment: nothing of the runner's forkpoint settings, a data directory of the test's own. */
export function childEnv(extra: NodeJS.ProcessEnv = {}): Record<string, string> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, XDG_DATA_HOME: TEST_DATA, ...extra };
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === "string"));
}

/** The arguments of `node` that run `forkpoint mcp <args>`. */
export const mcpArgs = (args: string[]) => [...nodeArgs(MAIN), "mcp", ...args];

export interface Connected {
  client: Client;
  /** What the server printed so far: its stderr (and, with --http, its stdout: stdio's carries the protocol). */
  output: () => string;
  /** Closes the client, and ends the server process (as a client does when it shuts a server down). */
  close(): Promise<void>;
}

/** A `forkpoint mcp --http` child, once it printed where it listens. */
export interface HttpChild {
  url: string;
  token: string;
  child: ChildProcess;
  /** Its stdout and stderr so far. */
  output: () => string;
  stop(): Promise<void>;
}

async function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => child.once("exit", () => resolve()));
}

/** Starts `forkpoint mcp --http <args>` and reads the URL and token it prints. */
export async function startHttp(args: string[], env: NodeJS.ProcessEnv = {}): Promise<HttpChild> {
  const child = spawn(process.execPath, mcpArgs([...args, "--http"]), { cwd: repo, env: childEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  const printed = await new Promise<{ url: string; token: string }>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const url = /^forkpoint mcp: (\S+)$/m.exec(out)?.[1];
      const token = /^token: (\S+)$/m.exec(out)?.[1];
      if (url && token) resolve({ url, token });
    });
    child.once("exit", (code) => reject(new Error(`forkpoint mcp --http exited (${code}): ${out}${err}`)));
  });
  return {
    ...printed,
    child,
    output: () => out + err,
    stop: async () => {
      child.kill("SIGTERM");
      await exited(child);
    },
  };
}

/** The official client over streamable HTTP, sending the token as MCP clients do (an Authorization header). */
export async function httpClient(url: string, token: string | null): Promise<Client> {
  const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
  const client = new Client({ name: "forkpoint-tests", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** Connects the official client to `forkpoint mcp <args>` over `transport`. */
export async function connect(transport: Transport, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Connected> {
  if (transport === "http") {
    const server = await startHttp(args, env);
    const client = await httpClient(server.url, server.token);
    return {
      client,
      output: server.output,
      close: async () => {
        await client.close();
        await server.stop();
      },
    };
  }
  const stdio = new StdioClientTransport({ command: process.execPath, args: mcpArgs(args), cwd: repo, env: childEnv(env), stderr: "pipe" });
  let err = "";
  stdio.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: "forkpoint-tests", version: "1.0.0" });
  await client.connect(stdio);
  return { client, output: () => err, close: () => client.close() };
}

/** A tool call's result, typed as tools answer. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The line of text a result starts with. */
export const lineOf = (r: CallToolResult): string => (r.content[0] as { text: string }).text;

/** Calls a tool that must succeed; returns its structured content (checked to be there, with its one-line text). */
export async function ok<T = any>(client: Client, name: string, args: Record<string, unknown> = {}): Promise<T> {
  const r = await call(client, name, args);
  expect(r.isError ?? false, r.isError ? lineOf(r) : "").toBe(false);
  expect(lineOf(r)).not.toContain("\n");
  expect(r.structuredContent).toBeDefined();
  return r.structuredContent as T;
}

/** Calls a tool that must fail: a tool error with text only; returns that text. */
export async function refused(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const r = await call(client, name, args);
  expect(r.isError).toBe(true);
  expect(r.structuredContent).toBeUndefined();
  return lineOf(r);
}

/** Writes `text` at `rel` under `root`, making its folders, as `mkdir -p && cat >` would. */
export function write(root: string, rel: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), text);
}

/** Every file under `root`, by "/" path, with its text. */
export function filesIn(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string) => {
    for (const e of fs.readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, e.name);
      if (e.isDirectory()) walk(full);
      else out[path.relative(root, full).split(path.sep).join("/")] = fs.readFileSync(full, "utf8");
    }
  };
  walk(root);
  return out;
}

/** A fresh temp root with a workspace folder in it (`ws`), a folder beside it (`outside`) and a database path. */
export function mcpRoot(prefix: string, workspace = "project"): { root: string; ws: string; outside: string; db: string } {
  const root = makeTempDir(prefix);
  const ws = path.join(root, workspace);
  const outside = path.join(root, "elsewhere");
  fs.mkdirSync(ws);
  fs.mkdirSync(outside);
  return { root, ws, outside, db: path.join(root, "forkpoint.db") };
}
