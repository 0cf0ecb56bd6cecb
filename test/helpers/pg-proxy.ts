import { createServer, connect, type Server, type Socket } from "node:net";

/**
 * A TCP proxy on loopback in front of the test PostgreSQL, for database faults that
 * `pg_terminate_backend` cannot make: a stall (connections open, nothing flows, new connections
 * hang until the client's connect timeout) and a drop of every connection at once.
 */
export interface PgProxy {
  /** The proxy's port on 127.0.0.1. */
  readonly port: number;
  /** `url` with host and port replaced by the proxy's. */
  urlFor(url: string): string;
  /** From now on nothing is forwarded and new connections wait (data is held, not lost). */
  stall(): void;
  /** Forwards again, held data first. */
  resume(): void;
  /** Resets every open connection (both sides), like a network failure. */
  dropAll(): void;
  /** Connections accepted so far. */
  readonly accepted: number;
  /**
   * Chunks the clients have sent towards the server so far: on loopback each write a client makes
   * arrives as one chunk, so the count of chunks a piece of work sends is its round trips.
   */
  readonly chunksToServer: number;
  close(): Promise<void>;
}

interface Pipe {
  client: Socket;
  server: Socket | null;
  held: { to: "server" | "client"; chunk: Buffer }[];
}

/** Starts a proxy to `target` (host, port). */
export async function startPgProxy(target: { host: string; port: number }): Promise<PgProxy> {
  const pipes = new Set<Pipe>();
  let stalled = false;
  let accepted = 0;
  let chunksToServer = 0;

  const send = (pipe: Pipe, to: "server" | "client", chunk: Buffer): void => {
    if (stalled || (to === "server" && pipe.server === null)) {
      pipe.held.push({ to, chunk });
      return;
    }
    (to === "server" ? pipe.server : pipe.client)?.write(chunk);
  };
  const connectServer = (pipe: Pipe): void => {
    const server = connect(target.port, target.host);
    pipe.server = server;
    server.on("data", (chunk: Buffer) => send(pipe, "client", chunk));
    server.on("error", () => pipe.client.destroy());
    server.on("close", () => pipe.client.destroy());
    flush(pipe);
  };
  const flush = (pipe: Pipe): void => {
    const held = pipe.held.splice(0);
    for (const { to, chunk } of held) send(pipe, to, chunk);
  };

  const listener: Server = createServer((client) => {
    accepted += 1;
    const pipe: Pipe = { client, server: null, held: [] };
    pipes.add(pipe);
    client.on("data", (chunk: Buffer) => {
      chunksToServer += 1;
      send(pipe, "server", chunk);
    });
    client.on("error", () => pipe.server?.destroy());
    client.on("close", () => {
      pipe.server?.destroy();
      pipes.delete(pipe);
    });
    if (!stalled) connectServer(pipe);
  });
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const address = listener.address();
  if (address === null || typeof address === "string") throw new Error("proxy has no port");

  return {
    port: address.port,
    get accepted() {
      return accepted;
    },
    get chunksToServer() {
      return chunksToServer;
    },
    urlFor(url) {
      const parsed = new URL(url);
      parsed.hostname = "127.0.0.1";
      parsed.port = String(address.port);
      return parsed.toString();
    },
    stall() {
      stalled = true;
    },
    resume() {
      stalled = false;
      for (const pipe of pipes) {
        if (pipe.server === null) connectServer(pipe);
        else flush(pipe);
      }
    },
    dropAll() {
      for (const pipe of pipes) {
        pipe.client.resetAndDestroy();
        pipe.server?.resetAndDestroy();
      }
      pipes.clear();
    },
    async close() {
      for (const pipe of pipes) {
        pipe.client.destroy();
        pipe.server?.destroy();
      }
      pipes.clear();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}
