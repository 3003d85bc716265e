// Starts the example: opens forkpoint, serves the API and the page Vite built, and prints the URL.
import { serve } from "@hono/node-server";
import { serveStatic } from "@hono/node-server/serve-static";
import { openForkpoint } from "forkpoint";
import { aiToolDefinitions } from "forkpoint/ai";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chatApp } from "./app.js";
import { chatModel } from "./model.js";
import { todoContext, todoList, todoTools, todoUndos } from "./todos.js";

const { model, label } = await chatModel().catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
const root = fileURLToPath(new URL("..", import.meta.url));
const dataDir = process.env.CHAT_DATA_DIR ?? join(root, ".data");
mkdirSync(dataDir, { recursive: true });
const todos = todoList(join(dataDir, "todos"));
const fp = openForkpoint({
  path: join(dataDir, "chat.db"),
  // The tools' undo and replay for every chat, including those no request has touched since this process started
  // (an undo right after a restart).
  tools: aiToolDefinitions(todoTools(todos), todoUndos(todos), { toolsContext: todoContext }),
});

const app = chatApp(fp, model, todos);
const page = join(root, "dist");
if (!existsSync(join(page, "index.html"))) console.warn(`No page in ${page}: build it with \`npm run example:chat\`.`);
app.use("/*", serveStatic({ root: page }));

const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: Number(process.env.PORT ?? 3000) }, ({ port }) =>
  console.log(`forkpoint chat-app on http://127.0.0.1:${port}/ with ${label}; data in ${dataDir}`),
);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => {
    server.close();
    void fp.close().then(() => process.exit(0));
  });
