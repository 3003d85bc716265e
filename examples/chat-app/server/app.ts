// The HTTP API the page calls: useChat's route, the sidebar, one chat's view, and the moves (versions, undo, rollback).
import { Hono, type Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { LanguageModel, UIMessage } from "ai";
import { ConflictError, ForkpointError, NotFoundError, ValidationError, type Forkpoint, type IfAt } from "forkpoint";
import { answer } from "./chat-route.js";
import { chatView } from "./chat-view.js";
import { sidebar } from "./sidebar.js";
import type { TodoList } from "./todos.js";

/** The signed-in user: put your auth's user id here. Every forkpoint call is scoped to it. */
const userOf = (_c: Context) => "demo";

/** A forkpoint error as an HTTP status: its `code` goes to the page as is. */
function statusOf(error: ForkpointError): ContentfulStatusCode {
  if (error instanceof NotFoundError) return 404;
  if (error instanceof ValidationError) return 400;
  if (error instanceof ConflictError) return 409;
  return 500;
}

export function chatApp(fp: Forkpoint, model: LanguageModel, todos: TodoList): Hono {
  const app = new Hono();
  const session = (c: Context) => fp.getSession(c.req.param("id")!, { userId: userOf(c) });
  /**
   * Body fields the page sends with a move: `requestId` makes a double click one move; `at`, the branch and head the
   * page shows, refuses it (SESSION_MOVED) once the chat is elsewhere. Undo and redo take back or bring back what came
   * after the last move, so they check the head too: a tab that missed another tab's question would take its turn
   * back. A version picked, a rollback or a checkpoint names its point itself, so the branch is enough: another tab
   * may roll back while this one's answer streams.
   */
  const body = async (c: Context) =>
    (await c.req.json()) as { requestId?: string; at?: IfAt; branchId?: string; checkpointId?: string; name?: string };
  const onBranch = (at: IfAt | undefined) => (at ? { ifAt: { branchId: at.branchId } } : {});
  const view = async (c: Context) => c.json(await chatView(await session(c), todos));

  app.post("/api/chat", async (c) => {
    const { id, messages, at } = (await c.req.json()) as { id: string; messages: UIMessage[]; at?: IfAt };
    return answer(await fp.getSession(id, { userId: userOf(c) }), messages, model, todos, at);
  });
  app.get("/api/sessions", async (c) => c.json(await sidebar(fp, userOf(c))));
  app.post("/api/sessions", async (c) => c.json(await chatView(await fp.createSession({ userId: userOf(c) }), todos)));
  app.get("/api/sessions/:id", view);
  // The `< 2/3 >` picker: that version's branch becomes current (its tool calls replayed, the others' undone).
  app.post("/api/sessions/:id/switch", async (c) => {
    const { branchId, requestId, at } = await body(c);
    await (await session(c)).switchBranch(branchId!, { requestId, ...onBranch(at) });
    return view(c);
  });
  app.post("/api/sessions/:id/undo", async (c) => {
    const { requestId, at } = await body(c);
    await (await session(c)).undo({ requestId, ifAt: at });
    return view(c);
  });
  app.post("/api/sessions/:id/redo", async (c) => {
    const { requestId, at } = await body(c);
    await (await session(c)).redo({ requestId, ifAt: at });
    return view(c);
  });
  app.post("/api/sessions/:id/checkpoints", async (c) => {
    const { name, requestId, at } = await body(c);
    await (await session(c)).checkpoint({ ...(name ? { name } : {}), requestId, ...onBranch(at) });
    return view(c);
  });
  app.post("/api/sessions/:id/rollback", async (c) => {
    const { checkpointId, requestId, at } = await body(c);
    await (await session(c)).rollback(checkpointId!, { requestId, ...onBranch(at) });
    return view(c);
  });
  app.onError((error, c) => {
    if (error instanceof ForkpointError) return c.json({ code: error.code, message: error.message }, statusOf(error));
    console.error(error);
    return c.json({ code: "INTERNAL", message: "the server failed: see its log" }, 500);
  });
  return app;
}
