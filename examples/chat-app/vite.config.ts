// Builds the page (web/) into dist/, which the server serves. `npx vite --config examples/chat-app/vite.config.ts`
// serves it with hot reload instead, the API proxied to the server on port 3000.
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL("web", import.meta.url)),
  plugins: [react()],
  logLevel: "warn",
  build: { outDir: fileURLToPath(new URL("dist", import.meta.url)), emptyOutDir: true },
  server: { proxy: { "/api": "http://127.0.0.1:3000" } },
});
