// `forkpoint mcp --http`: the MCP server over streamable HTTP on 127.0.0.1, behind a random token and a Host check, as
// `forkpoint ui` is. Stateless, as the SDK's stateless example is: each POST gets its own server and transport.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { loopbackHost, newToken, ownOrigin, sameToken, TOKEN_HEADER } from "../ui/auth.js";

/** The one path the server answers on. */
export const MCP_PATH = "/mcp";

export interface McpHttpOptions {
  /** A new MCP server for one request (its tools over the session). */
  serverFor: () => McpServer;
  /** 0 (the default): a free port chosen by the system. */
  port?: number;
  /** The token (default: a fresh random one). */
  token?: string;
  /**
   * What close() waits for before it ends the connections: the moves under way, which finish anyway, so that their
   * answers are sent (a read under way, a diff, is cut off: Ctrl-C is obeyed at once).
   */
  settling?: () => Promise<void>;
  /** Where a request that failed inside the SDK is reported (never on the response). */
  onError?: (error: unknown) => void;
}

export interface McpHttpServer {
  /** The endpoint: what a client's configuration names. */
  url: string;
  port: number;
  token: string;
  server: Server;
  close(): Promise<void>;
}

/** How long close() leaves the requests under way, once the moves ended, to send their answers. */
const ANSWER_MS = 100;

/** The tokens a request carries: `Authorization: Bearer …` (what MCP clients send), the forkpoint header, or `?token=`. */
function requestTokens(req: IncomingMessage, url: URL): string[] {
  const found: string[] = [];
  // The scheme is case-insensitive (RFC 9110): "bearer" and "BEARER" are "Bearer".
  const bearer = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(req.headers.authorization ?? "");
  if (bearer) found.push(bearer[1]!);
  const header = req.headers[TOKEN_HEADER];
  if (typeof header === "string") found.push(header);
  const query = url.searchParams.get("token");
  if (query) found.push(query);
  return found;
}

/** A JSON-RPC error answer, as the SDK's transport writes its own. */
function refuse(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

/** Starts the server on 127.0.0.1 (never another interface) and resolves once it listens. */
export async function startMcpHttpServer(options: McpHttpOptions): Promise<McpHttpServer> {
  const token = options.token ?? newToken();
  let port = 0;
  // The requests being answered: close() gives those it waited for (moves) the moment their answers take to be sent.
  const answering = new Set<Promise<void>>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    // A page on another site that rebinds its name to 127.0.0.1 sends its own Host (and Origin): refused.
    if (!loopbackHost(req.headers.host, port) || !ownOrigin(req.headers.origin, port)) return refuse(res, 403, "unexpected Host or Origin");
    if (!requestTokens(req, url).some((t) => sameToken(t, token)))
      return refuse(res, 401, 'send the token forkpoint mcp printed: "Authorization: Bearer <token>"');
    if (url.pathname !== MCP_PATH) return refuse(res, 404, `the MCP endpoint is ${MCP_PATH}`);
    // Stateless: no session to resume (GET) or end (DELETE).
    if (req.method !== "POST") {
      res.setHeader("allow", "POST");
      return refuse(res, 405, "POST only (a stateless server)");
    }
    const server = options.serverFor();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }

  const server = createServer((req, res) => {
    const answered = new Promise<void>((resolve) => res.once("close", resolve));
    answering.add(answered);
    void answered.then(() => answering.delete(answered));
    handle(req, res).catch((error: unknown) => {
      options.onError?.(error);
      if (!res.headersSent) refuse(res, 500, "internal error");
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${MCP_PATH}`,
    port,
    token,
    server,
    close: async () => {
      // No new connection; the moves under way end and are answered (within ANSWER_MS; the answer of one that just
      // ended is written without waiting on anything), then every connection is closed, the reads under way cut off.
      const closed = new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
      server.closeIdleConnections();
      await options.settling?.();
      await Promise.race([Promise.all(answering), new Promise((resolve) => setTimeout(resolve, ANSWER_MS))]);
      server.closeAllConnections();
      await closed;
    },
  };
}
