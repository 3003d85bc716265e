// `forkpoint mcp` over stdio: the SDK's stdio transport on this process's stdin and stdout, until the client hangs up.
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Readable } from "node:stream";
import { boundedLines, MAX_LINE_BYTES } from "./bounded-lines.js";

/** The answer to a message too long to read (its id unknown): JSON-RPC's "Invalid Request". */
const TOO_LONG = JSON.stringify({
  jsonrpc: "2.0",
  id: null,
  error: { code: -32600, message: `PAYLOAD_TOO_LARGE: a message over ${MAX_LINE_BYTES} bytes was dropped unread` },
});

/**
 * Serves `server` on stdin/stdout and resolves once the client closes stdin (as the SDK's client does first when it
 * shuts a server down) or the process is told to stop (SIGINT, SIGTERM), with the server closed. Nothing else may
 * write to stdout meanwhile: it carries the protocol. `settling` is what the close waits for, no request read any
 * more: the moves under way, which finish anyway, so that their answers are sent (a dropped answer reads as a failed
 * rollback that in fact happened).
 */
export async function serveStdio(server: McpServer, stdin: Readable = process.stdin, settling?: () => Promise<void>): Promise<void> {
  const ended = new Promise<void>((resolve) => {
    const stop = () => {
      stdin.off("end", stop);
      stdin.off("close", stop);
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    stdin.once("end", stop);
    stdin.once("close", stop);
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  // Whole lines of at most the transport's limit reach it: one longer is answered and dropped, the server goes on.
  const lines = stdin.pipe(boundedLines(() => process.stdout.write(`${TOO_LONG}\n`)));
  await server.connect(new StdioServerTransport(lines, process.stdout));
  await ended;
  stdin.pause();
  await settling?.();
  // The answer of a move that just ended is a few promise steps behind it: written before the transport closes.
  await new Promise((resolve) => setImmediate(resolve));
  await server.close();
}
