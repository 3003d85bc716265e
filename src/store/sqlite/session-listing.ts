// Session listings as a sidebar reads them: each session with its current lineage's last message, in one statement.
import { listedSessionFrom, type ListedColumns, type ListedSessionRow } from "../port/index.js";
import { SESSION_INFO_COLS, sessionRow } from "./columns.js";

// A walk is at most as deep as the session has branches: a cycle in damaged branch rows stops there.
const BRANCH_COUNT = `(SELECT count(*) FROM branches c WHERE c.session_id = b.session_id)`;

/**
 * The page (`where`, newest first, `@limit` rows), then for each of its sessions a walk up the current branch's ancestry
 * that stops at the first segment holding a message: that segment's newest message is the lineage's last. Each step is
 * one backward search of `entries_branch_position` from the segment's end, passing over the tool calls and state
 * changes after its last message, so a page costs the same however long its sessions' histories are. The message's
 * `msg_count` is the lineage's message count.
 */
function listedSessionsSql(where: string): string {
  const lastMessageIn = (branch: string, after: string, upTo: string) =>
    `(SELECT e.position FROM entries e WHERE e.branch_id = ${branch} AND e.position > ${after} AND e.position <= ${upTo}
      AND e.kind = 'message' ORDER BY e.position DESC LIMIT 1)`;
  return `WITH RECURSIVE
    page AS (SELECT ${SESSION_INFO_COLS} FROM sessions WHERE ${where} ORDER BY seq DESC LIMIT @limit),
    lin (session_seq, branch_id, parent_id, fork_position, up_to, found, depth, lim) AS (
      SELECT p.seq, b.id, b.parent_id, b.fork_position, 9223372036854775807,
        ${lastMessageIn("b.id", "b.fork_position", "9223372036854775807")}, 0, ${BRANCH_COUNT}
      FROM page p JOIN branches b ON b.id = p.currentBranchId
      UNION ALL
      SELECT lin.session_seq, b.id, b.parent_id, b.fork_position, min(lin.up_to, lin.fork_position),
        ${lastMessageIn("b.id", "b.fork_position", "min(lin.up_to, lin.fork_position)")}, lin.depth + 1, lin.lim
      FROM lin JOIN branches b ON b.id = lin.parent_id WHERE lin.found IS NULL AND lin.depth + 1 < lin.lim)
  SELECT p.*, m.id AS lastId, m.branch_id AS lastBranchId, m.position AS lastPosition, m.role AS lastRole,
    m.content AS lastContent, m.client_id AS lastClientId, m.metadata AS lastMetadata, m.created_at AS lastCreatedAt,
    m.msg_count AS messageCount
  FROM page p LEFT JOIN lin ON lin.session_seq = p.seq AND lin.found IS NOT NULL
    LEFT JOIN entries m ON m.branch_id = lin.branch_id AND m.position = lin.found
  ORDER BY p.seq DESC`;
}

/** A user's page (`@userId`, below seq `@before`, `@limit` rows). */
export const LIST_SESSIONS = listedSessionsSql(`user_id = @userId AND seq < @before`);
/** Every user's page (below seq `@before`, `@limit` rows): the operator listing. */
export const LIST_ALL_SESSIONS = listedSessionsSql(`seq < @before`);

/** A row of `listedSessionsSql` as the port's `ListedSessionRow`. */
export const listedSessionRow = (row: unknown): ListedSessionRow => listedSessionFrom(row as ListedColumns, (c) => sessionRow(c)!);
