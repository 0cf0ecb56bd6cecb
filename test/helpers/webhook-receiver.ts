import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the receiver got. */
export interface ReceivedWebhook {
  path: string;
  contentType: string | undefined;
  body: Record<string, unknown>;
  /** The status the receiver answered with. */
  answered: number;
}

/** A real HTTP server on 127.0.0.1 that records webhook POSTs. */
export interface WebhookReceiver {
  /** `http://127.0.0.1:PORT` */
  url: string;
  received: ReceivedWebhook[];
  /** Answer the next `count` requests with `status` (then 200 again). */
  failNext(count: number, status?: number): void;
  close(): Promise<void>;
}

/** Starts a receiver on a free loopback port; `close()` stops it. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let failures: { count: number; status: number } = { count: 0, status: 500 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const failing = failures.count > 0;
      if (failing) failures = { ...failures, count: failures.count - 1 };
      const answered = failing ? failures.status : 200;
      received.push({ path: req.url ?? "", contentType: req.headers["content-type"], body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>, answered });
      res.writeHead(answered, { "content-type": "text/plain" }).end(failing ? "no" : "ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    failNext(count, status = 500) {
      failures = { count, status };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
