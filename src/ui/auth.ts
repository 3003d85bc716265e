// The UI server's gate: a random token required on every request, compared in constant time, and Host and Origin checks.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

export const TOKEN_COOKIE = "forkpoint_ui_token";
export const TOKEN_HEADER = "x-forkpoint-token";

/** A fresh token: 32 random bytes, URL-safe. */
export const newToken = (): string => randomBytes(32).toString("base64url");

/** Equal in constant time: both sides are hashed first so that their lengths do not leak either. */
export function sameToken(given: string | undefined | null, expected: string): boolean {
  if (!given) return false;
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** The token a request carries: the header (the page's JSON calls), the query (the printed URL), or the cookie. */
export function requestTokens(req: IncomingMessage, url: URL): string[] {
  const found: string[] = [];
  const header = req.headers[TOKEN_HEADER];
  if (typeof header === "string") found.push(header);
  const query = url.searchParams.get("token");
  if (query) found.push(query);
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === TOKEN_COOKIE) found.push(decodeURIComponent(value.join("=")));
  }
  return found;
}

/**
 * True when the Host header names the loopback address this server listens on: a page on another site that rebinds
 * its own name to 127.0.0.1 (DNS rebinding) sends its own name, and is refused.
 */
export function loopbackHost(host: string | undefined, port: number): boolean {
  return host === `127.0.0.1:${port}` || host === `localhost:${port}`;
}

/**
 * True for no Origin (curl, a script: not a browser page) or this server's own: a page of another site (or a sandboxed
 * one, `null`) that holds the token, from a leaked URL, say, is refused all the same.
 */
export function ownOrigin(origin: string | undefined, port: number): boolean {
  return origin === undefined || origin === `http://127.0.0.1:${port}` || origin === `http://localhost:${port}`;
}
