/**
 * `devmind/server`: the HTTP API as a Hono app, for mounting it in a server of one's own.
 * `createApp({ runtime, config })` builds the app `startServer` listens with (`AppDeps`: the
 * runtime, the config, and optionally a shutdown signal, a logger and langgraph.json's `http` /
 * `ui`). Most users want `startServer` from `devmind` itself; this subpath is outside CONTRACT
 * section 9 and may change between versions.
 */
export { createApp, type AppDeps } from "./app.js";
export { startServer, type StartServerOptions, type RunningServer } from "./start-server.js";
