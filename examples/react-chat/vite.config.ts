import { defineConfig } from "vite";

/**
 * The example needs no Vite plugin: Vite's own transform compiles the TSX (React's automatic JSX
 * runtime). `VITE_API_URL`, `VITE_ASSISTANT_ID` and `VITE_API_KEY` set the defaults the page reads
 * (see src/config.ts).
 */
export default defineConfig({
  root: import.meta.dirname,
  oxc: { jsx: { runtime: "automatic", importSource: "react" } },
  server: { host: "127.0.0.1", port: 5173 },
  build: {
    // one bundle of about 700 kB (React, LangChain core and the SDK); a demo needs no code splitting
    chunkSizeWarningLimit: 1000,
    rolldownOptions: {
      // @langchain/react marks its modules "use client" for React Server Components; a client bundle has no use for it
      onwarn(warning, warn) {
        if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
      },
    },
  },
});
