// Builds the page (ui/) into dist/web/, which the package ships and `forkpoint ui` serves.
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  // Relative asset URLs: the page works whatever path serves it.
  base: "./",
  plugins: [react()],
  logLevel: "warn",
  build: { outDir: fileURLToPath(new URL("../dist/web", import.meta.url)), emptyOutDir: true, chunkSizeWarningLimit: 1024 },
});
