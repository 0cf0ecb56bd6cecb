/**
 * The CLI facing a DATABASE_URL that is not a PostgreSQL server: a clear DATABASE_UNREACHABLE
 * naming the address, no stack trace, and nothing else.
 */
import { createServer, type Server, type Socket } from "node:net";
import { afterEach, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";

const servers: Server[] = [];
const sockets = new Set<Socket>();
afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** A loopback port that answers like an HTTP server, whatever it is sent. */
async function httpLikePort(): Promise<number> {
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    socket.end("HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

it("a DATABASE_URL pointing at a port that is not PostgreSQL is DATABASE_UNREACHABLE naming it, without a stack trace", async () => {
  const port = await httpLikePort();
  const result = await runCli(["runs"], { DATABASE_URL: `postgres://devmind:s3cret-pw@127.0.0.1:${port}/devmind` }, { timeoutMs: 60_000 });
  expect(result.code).not.toBe(0);
  expect(result.stderr).toContain("DATABASE_UNREACHABLE");
  expect(result.stderr).toContain(`127.0.0.1:${port}`);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  expect(result.stderr).not.toContain("unexpected error");
  expect(result.stderr + result.stdout).not.toContain("s3cret-pw");
}, 120_000);
