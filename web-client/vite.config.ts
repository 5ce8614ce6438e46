// Builds the SPA into dist/ (served by `cairn serve` at `/`). In dev, /api is
// proxied to a local `cairn serve` so the same relative URLs work everywhere.
import { defineConfig } from "vitest/config";

export default defineConfig({
  base: "/",
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, target: "es2022" },
  server: { proxy: { "/api": process.env.CAIRN_URL ?? "http://127.0.0.1:8787" } },
  test: { environment: "happy-dom", include: ["tests/**/*.test.{ts,tsx}"] },
});
