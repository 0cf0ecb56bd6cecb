import { createServer, type Server } from "node:http";

/**
 * What `npm run bench -- server --observed` points devmind's observers at: an OTLP/HTTP sink
 * (accepts and counts span export requests, as a collector would) and a scraper reading
 * `/metrics` every `scrapeMs` (as Prometheus would, at a harsher interval than its usual 15 s).
 */
export interface ObserverLoad {
  /** OTEL_EXPORTER_OTLP_ENDPOINT for the observed server. */
  otlpUrl: string;
  /** Starts scraping `url` (its /metrics) until `stop`. */
  scrape(url: string): void;
  /** Export requests and scrapes so far (a load that saw none measured nothing). */
  counts(): { exports: number; scrapes: number; failedScrapes: number };
  stop(): Promise<void>;
}

export async function startObserverLoad(scrapeMs = 1_000): Promise<ObserverLoad> {
  let exports = 0;
  let scrapes = 0;
  let failedScrapes = 0;
  const sink: Server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      exports += 1;
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", () => resolve()));
  const timers: NodeJS.Timeout[] = [];
  return {
    otlpUrl: `http://127.0.0.1:${(sink.address() as { port: number }).port}`,
    scrape(url) {
      timers.push(
        setInterval(() => {
          fetch(`${url}/metrics`).then(
            async (response) => {
              await response.text();
              if (response.ok) scrapes += 1;
              else failedScrapes += 1;
            },
            () => (failedScrapes += 1),
          );
        }, scrapeMs),
      );
    },
    counts: () => ({ exports, scrapes, failedScrapes }),
    async stop() {
      for (const timer of timers) clearInterval(timer);
      await new Promise<void>((resolve) => {
        sink.close(() => resolve());
        sink.closeAllConnections();
      });
    },
  };
}
