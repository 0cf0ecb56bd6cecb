import { describe, expect, it } from "vitest";
import { OutageLog } from "../../src/server/outage-log.js";
import { captureLog } from "../helpers/log-lines.js";

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const request = { method: "POST", path: "/threads", requestId: "r", error: "disk full" };

describe("OutageLog", () => {
  it("logs the first 503 of an outage at level error, counts the rest, and says the count once the outage is over; the next outage is logged again", async () => {
    const log = captureLog();
    const outages = new OutageLog(log.logger, 100);
    for (let index = 0; index < 7; index += 1) outages.unavailable(index < 5 ? "DATABASE_WRITE_FAILED" : "DATABASE_UNREACHABLE", request);
    expect(log.lines().map((line) => line["event"])).toEqual(["request.unavailable"]);
    // quiet for longer than 100 ms: the outage is over
    const deadline = Date.now() + 5_000;
    while (log.events("request.available").length === 0 && Date.now() < deadline) await sleep(20);
    expect(log.events("request.available").map((line) => [line["unavailable_requests"], line["codes"]])).toEqual([[7, ["DATABASE_WRITE_FAILED", "DATABASE_UNREACHABLE"]]]);
    outages.unavailable("DATABASE_UNREACHABLE", request);
    outages.flush();
    expect(log.lines().map((line) => [line["event"], line["unavailable_requests"] ?? null])).toEqual([
      ["request.unavailable", null],
      ["request.available", 7],
      ["request.unavailable", null],
      ["request.available", 1],
    ]);
  });
});
