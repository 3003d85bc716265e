// `forkpoint ui`'s HTTP server (node:http): the built page and the JSON endpoints, on 127.0.0.1, behind a token.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ConflictError, ForkpointError, NotFoundError, ValidationError, type Forkpoint } from "../index.js";
import { ToolMoveError } from "../models/errors.js";
import { routes, type ApiRequest } from "./api.js";
import { defaultAssetsDir, readAsset } from "./assets.js";
import { loopbackHost, newToken, ownOrigin, requestTokens, sameToken, TOKEN_COOKIE } from "./auth.js";

export interface UiServerOptions {
  /** The opened database the endpoints read (and, with `allowWrites`, move). */
  fp: Forkpoint;
  /** 0 (the default): a free port chosen by the system. */
  port?: number;
  /** Allows rollback and switch; without it they answer 409 READ_ONLY. */
  allowWrites?: boolean;
  /** The built page's folder (default: the package's dist/web). */
  assetsDir?: string;
  /** The token (default: a fresh random one). */
  token?: string;
}

export interface UiServer {
  /** The page's address with the token: what the user opens. */
  url: string;
  port: number;
  token: string;
  server: Server;
  close(): Promise<void>;
}

const MAX_BODY = 64 * 1024;

/** The HTTP status of a failure: the error codes of the public API map to 400, 404 and 409; a body too large is 413. */
function statusOf(error: ForkpointError): number {
  if (error instanceof NotFoundError) return 404;
  if (error instanceof ConflictError) return 409;
  // The library's PayloadTooLargeError (a value over a documented limit) is a ValidationError: 400, as documented.
  if (error instanceof ValidationError) return 400;
  if (error.code === "PAYLOAD_TOO_LARGE") return 413;
  return 500;
}

const HEADERS = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  // The page loads only its own scripts and styles: an injected inline script would not run even if one got through.
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
};

function send(res: ServerResponse, status: number, body: string | Buffer, type: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...HEADERS, "content-type": type, ...extra });
  res.end(body);
}

const json = (res: ServerResponse, status: number, value: unknown) =>
  send(res, status, JSON.stringify(value), "application/json; charset=utf-8");

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new ForkpointError("PAYLOAD_TOO_LARGE", "request body too large");
    chunks.push(chunk);
  }
  if (size === 0) return {};
  const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new SyntaxError("body must be a JSON object");
  return parsed as Record<string, unknown>;
}

/** Starts the server on 127.0.0.1 (never another interface) and resolves once it listens. */
export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const { fp, allowWrites = false } = options;
  const token = options.token ?? newToken();
  const assetsDir = options.assetsDir ?? defaultAssetsDir();
  let port = 0;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (!loopbackHost(req.headers.host, port)) return json(res, 403, { error: { code: "BAD_HOST", message: "unexpected Host header" } });
    if (!ownOrigin(req.headers.origin, port)) return json(res, 403, { error: { code: "BAD_ORIGIN", message: "unexpected Origin header" } });
    if (!requestTokens(req, url).some((t) => sameToken(t, token)))
      return json(res, 401, { error: { code: "UNAUTHORIZED", message: "open the URL forkpoint ui printed (it carries the token)" } });

    if (url.pathname.startsWith("/api/")) {
      const route = routes[`${req.method} ${url.pathname}`];
      if (!route) return json(res, 404, { error: { code: "NO_ROUTE", message: `no endpoint ${req.method} ${url.pathname}` } });
      // A write must come from the page's own script (a header a form post from another site cannot set).
      // Parameters (`; charset=utf-8`) and case aside, as HTTP clients send it.
      const mediaType = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
      if (req.method === "POST" && mediaType !== "application/json")
        return json(res, 415, { error: { code: "UNSUPPORTED_MEDIA_TYPE", message: "send application/json" } });
      try {
        const apiReq: ApiRequest = {
          method: req.method ?? "GET",
          query: url.searchParams,
          body: req.method === "POST" ? await readBody(req) : {},
        };
        return json(res, 200, await route(fp, apiReq, allowWrites));
      } catch (error) {
        if (error instanceof ForkpointError) {
          const field = (error as { field?: unknown }).field;
          // A move stopped by a failing undo or replay: what it had done before (the session did not move).
          const stopped =
            error instanceof ToolMoveError
              ? { invocationId: error.invocationId, tool: error.tool, undone: error.undone, replayed: error.replayed, failed: error.failed }
              : {};
          return json(res, statusOf(error), {
            error: { code: error.code, message: error.message, ...(field ? { field } : {}), ...stopped },
          });
        }
        if (error instanceof SyntaxError) return json(res, 400, { error: { code: "BAD_JSON", message: error.message } });
        return json(res, 500, { error: { code: "INTERNAL", message: error instanceof Error ? error.message : String(error) } });
      }
    }

    if (req.method !== "GET") return json(res, 405, { error: { code: "METHOD_NOT_ALLOWED", message: "GET only" } });
    const asset = await readAsset(assetsDir, url.pathname);
    if (!asset) return send(res, 404, "not found", "text/plain; charset=utf-8");
    // The page's first load carries the token in its URL; the cookie carries it for the assets it loads next.
    const cookie: Record<string, string> = url.searchParams.has("token")
      ? { "set-cookie": `${TOKEN_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/` }
      : {};
    send(res, 200, asset.body, asset.type, cookie);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { error: { code: "INTERNAL", message: String(error) } });
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
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    token,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
