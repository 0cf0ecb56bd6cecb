import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** Debian's PgBouncer (`apt-get install pgbouncer`; `.ci/run` installs it). */
export const PGBOUNCER_BIN = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].find((path) => existsSync(path));

/** A PgBouncer this test started, in front of one PostgreSQL server. */
export interface PgBouncer {
  readonly port: number;
  /** `url` (a postgres:// URL of the server behind it) with host and port replaced by the pooler's. */
  pooled(url: string): string;
  /** What it logged so far. */
  log(): string;
  /** Stops it (SIGTERM, SIGKILL after 5 s) and removes its files. */
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (free when asked; a race with another process is unlikely in a test). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/**
 * Starts `pgbouncer` on a free loopback port in front of the server of `targetUrl` (every
 * database name maps to the same name there), trust auth for the URL's user, with the given pool
 * mode (transaction: what managed poolers run), from an ini and user list in a temporary
 * directory. As root it runs as `postgres` (`-u`), since PgBouncer refuses to run as root.
 * Resolves once it accepts connections.
 */
export async function startPgBouncer(targetUrl: string, options: { poolMode?: "transaction" | "session"; poolSize?: number } = {}): Promise<PgBouncer> {
  if (PGBOUNCER_BIN === undefined) throw new Error("pgbouncer is not installed (apt-get install -y pgbouncer)");
  const target = new URL(targetUrl);
  const user = decodeURIComponent(target.username || "postgres");
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "devmind-pgbouncer-"));
  chmodSync(dir, 0o755);
  const ini = join(dir, "pgbouncer.ini");
  const users = join(dir, "userlist.txt");
  writeFileSync(users, `"${user}" ""\n`, { mode: 0o644 });
  writeFileSync(
    ini,
    [
      "[databases]",
      `* = host=${target.hostname} port=${target.port || "5432"}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${users}`,
      `pool_mode = ${options.poolMode ?? "transaction"}`,
      `default_pool_size = ${options.poolSize ?? 8}`,
      "max_client_conn = 500",
      "ignore_startup_parameters = extra_float_digits,options",
      "",
    ].join("\n"),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(PGBOUNCER_BIN, [...(asRoot ? ["-u", "postgres"] : []), ini], { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (log += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (log += chunk));
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  };
  const until = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > until) {
      await stop();
      throw new Error(`pgbouncer did not start on port ${port}: ${log}`);
    }
    await sleep(20);
  }
  return {
    port,
    pooled(url: string): string {
      const parsed = new URL(url);
      parsed.hostname = "127.0.0.1";
      parsed.port = String(port);
      return parsed.toString();
    },
    log: () => log,
    stop,
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
