import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Debian's Prometheus (installed by .ci/run). */
export const PROMETHEUS_BIN = "/usr/bin/prometheus";
export const HAS_PROMETHEUS = existsSync(PROMETHEUS_BIN);

/** A free loopback port (bound and released: another process could take it in between, rarely). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/** A Prometheus server started for a test: its query API, and its stop (process killed, storage removed). */
export interface PrometheusProcess {
  url: string;
  /** The instant vector of `expr` now, as `[labels, value]` pairs. */
  query(expr: string): Promise<{ metric: Record<string, string>; value: number }[]>;
  stderr(): string;
  stop(): Promise<void>;
}

/**
 * Starts Prometheus on a free port with a temp config and storage, scraping each of `targets`
 * (`host:port`, path /metrics) every second with `bearer` as the scrape key.
 */
export async function startPrometheus(targets: { job: string; target: string }[], bearer: string): Promise<PrometheusProcess> {
  const dir = mkdtempSync(join(tmpdir(), "devmind-prom-"));
  const port = await freePort();
  const jobs = targets
    .map(({ job, target }) => [`  - job_name: ${job}`, "    scrape_interval: 1s", "    scrape_timeout: 1s", "    authorization:", "      type: Bearer", `      credentials: ${bearer}`, "    static_configs:", `      - targets: ["${target}"]`].join("\n"))
    .join("\n");
  writeFileSync(join(dir, "prometheus.yml"), `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n${jobs}\n`);
  const child: ChildProcess = spawn(PROMETHEUS_BIN, [`--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`, "--log.level=warn"], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  };
  // ready within a bounded wait, or stopped and failed
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ready = await fetch(`${url}/-/ready`).then((r) => r.ok, () => false);
    if (ready) break;
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error(`prometheus did not become ready; stderr: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    stderr: () => stderr,
    stop,
    async query(expr) {
      const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
      const body = (await response.json()) as { status: string; data?: { result: { metric: Record<string, string>; value: [number, string] }[] }; error?: string };
      if (body.status !== "success" || body.data === undefined) throw new Error(`query ${expr} failed: ${body.error ?? response.status}`);
      return body.data.result.map((item) => ({ metric: item.metric, value: Number(item.value[1]) }));
    },
  };
}
