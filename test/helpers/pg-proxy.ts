import { createServer, connect, type Server, type Socket } from "node:net";

/**
 * A TCP proxy on loopback in front of the test PostgreSQL, for database faults that
 * `pg_terminate_backend` cannot make: a stall (connections open, nothing flows, new connections
 * hang until the client's connect timeout) and a drop of every connection at once.
 */
export interface PgProxy {
  /** The proxy's port on its listen address (127.0.0.1 unless `listenHost`). */
  readonly port: number;
  /** `url` with host and port replaced by the proxy's. */
  urlFor(url: string): string;
  /** From now on nothing is forwarded and new connections wait (data is held, not lost). */
  stall(): void;
  /** Forwards again, held data first. */
  resume(): void;
  /** Resets every open connection (both sides), like a network failure. */
  dropAll(): void;
  /**
   * Loses the answer to the next write whose messages name `marker` (a statement's name or text,
   * e.g. "ledger_complete"): that write and its COMMIT reach the server and commit there, but the
   * answer is swallowed and the connection dropped once the server reports the transaction over
   * (ReadyForQuery, idle) — the client never learns that it committed, as in a failover. A write
   * inside a transaction is doomed with the COMMIT that follows it. `nth` (default 1): the n-th
   * chunk naming the marker from now on. Resolves once that happened.
   */
  loseAnswer(marker: string, nth?: number): Promise<void>;
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
  /** The armed marker was sent on this connection; its transaction's end is to be lost. */
  marked: boolean;
  /** Swallowing the server's answers until the transaction is over, then dropping the connection. */
  doomed: boolean;
  /** The transaction status of the server's last ReadyForQuery ('I' idle, 'T' in a transaction, 'E' failed). */
  status: string;
}

const COMMIT = Buffer.from("COMMIT\0");
const BEGIN = Buffer.from("BEGIN\0");

/** The status byte of the last ReadyForQuery ('Z', length 5, status) in `chunk`, or null. */
function lastReadyStatus(chunk: Buffer): string | null {
  for (let at = chunk.length - 6; at >= 0; at -= 1) {
    if (chunk[at] === 0x5a && chunk[at + 1] === 0 && chunk[at + 2] === 0 && chunk[at + 3] === 0 && chunk[at + 4] === 5) {
      const status = String.fromCharCode(chunk[at + 5] as number);
      if (status === "I" || status === "T" || status === "E") return status;
    }
  }
  return null;
}

/** Where a proxy listens and how slow it is. */
export interface PgProxyOptions {
  /** The address to listen on (default 127.0.0.1), e.g. the root side of a test veth pair. */
  listenHost?: string;
  /** Every chunk is forwarded this long after it arrived, in each direction, in order (default 0). */
  delayMs?: number;
}

/** Starts a proxy to `target` (host, port). */
export async function startPgProxy(target: { host: string; port: number }, options: PgProxyOptions = {}): Promise<PgProxy> {
  const listenHost = options.listenHost ?? "127.0.0.1";
  const delayMs = options.delayMs ?? 0;
  const pipes = new Set<Pipe>();
  let stalled = false;
  let accepted = 0;
  let chunksToServer = 0;
  let armed: { marker: Buffer; left: number; done: () => void } | null = null;

  const send = (pipe: Pipe, to: "server" | "client", chunk: Buffer): void => {
    // timers of one duration fire in the order they were set: the stream keeps its order
    if (delayMs > 0) setTimeout(() => forward(pipe, to, chunk), delayMs);
    else forward(pipe, to, chunk);
  };
  const forward = (pipe: Pipe, to: "server" | "client", chunk: Buffer): void => {
    if (stalled || (to === "server" && pipe.server === null)) {
      pipe.held.push({ to, chunk });
      return;
    }
    (to === "server" ? pipe.server : pipe.client)?.write(chunk);
  };
  const connectServer = (pipe: Pipe): void => {
    const server = connect(target.port, target.host);
    pipe.server = server;
    server.on("data", (chunk: Buffer) => {
      const status = lastReadyStatus(chunk);
      if (pipe.doomed) {
        // the answer is swallowed; once the server says the transaction is over, the connection goes
        if (status === "I" || status === "E") {
          pipe.client.resetAndDestroy();
          server.destroy();
          const done = armed?.done;
          armed = null;
          done?.();
        }
        return;
      }
      if (status !== null) {
        pipe.status = status;
        if (status === "I") pipe.marked = false;
      }
      send(pipe, "client", chunk);
    });
    server.on("error", () => pipe.client.destroy());
    server.on("close", () => pipe.client.destroy());
    flush(pipe);
  };
  const flush = (pipe: Pipe): void => {
    const held = pipe.held.splice(0);
    for (const { to, chunk } of held) forward(pipe, to, chunk);
  };

  const listener: Server = createServer((client) => {
    accepted += 1;
    const pipe: Pipe = { client, server: null, held: [], marked: false, doomed: false, status: "I" };
    pipes.add(pipe);
    client.on("data", (chunk: Buffer) => {
      chunksToServer += 1;
      if (armed !== null && !pipe.doomed && [...pipes].every((other) => !other.doomed)) {
        if (chunk.includes(armed.marker) && !pipe.marked) {
          armed.left -= 1;
          if (armed.left === 0) pipe.marked = true;
        }
        // the marked write commits with this chunk: a COMMIT, or a statement outside any transaction
        if (pipe.marked && (chunk.includes(COMMIT) || (pipe.status === "I" && !chunk.includes(BEGIN)))) pipe.doomed = true;
      }
      send(pipe, "server", chunk);
    });
    client.on("error", () => pipe.server?.destroy());
    client.on("close", () => {
      pipe.server?.destroy();
      pipes.delete(pipe);
    });
    if (!stalled) connectServer(pipe);
  });
  await new Promise<void>((resolve) => listener.listen(0, listenHost, resolve));
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
      parsed.hostname = listenHost;
      parsed.port = String(address.port);
      return parsed.toString();
    },
    loseAnswer(marker, nth = 1) {
      return new Promise<void>((resolve) => {
        armed = { marker: Buffer.from(marker), left: nth, done: resolve };
      });
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
