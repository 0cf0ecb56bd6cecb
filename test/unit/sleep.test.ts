import { describe, expect, it } from "vitest";
import { sleep, wakeableSleep } from "../../src/sleep.js";

/** An AbortSignal whose listener count can be read (Node keeps no public count). */
function countedSignal(): { controller: AbortController; listeners: () => number } {
  const controller = new AbortController();
  let count = 0;
  const add = controller.signal.addEventListener.bind(controller.signal);
  const remove = controller.signal.removeEventListener.bind(controller.signal);
  controller.signal.addEventListener = ((...args: Parameters<typeof add>) => (count++, add(...args))) as typeof add;
  controller.signal.removeEventListener = ((...args: Parameters<typeof remove>) => (count--, remove(...args))) as typeof remove;
  return { controller, listeners: () => count };
}

describe("sleep", () => {
  it("waits the full time without a signal, and with one that never aborts (leaving no listener)", async () => {
    let started = performance.now();
    await sleep(40);
    expect(performance.now() - started).toBeGreaterThanOrEqual(35);
    const { controller, listeners } = countedSignal();
    started = performance.now();
    await sleep(40, controller.signal);
    expect(performance.now() - started).toBeGreaterThanOrEqual(35);
    expect(listeners()).toBe(0);
  });

  it("resolves (never rejects) as soon as the signal aborts, and removes its listener", async () => {
    const { controller, listeners } = countedSignal();
    const started = performance.now();
    const waiting = sleep(10_000, controller.signal);
    expect(listeners()).toBe(1);
    setTimeout(() => controller.abort(new Error("stop")), 20);
    await expect(waiting).resolves.toBeUndefined();
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(listeners()).toBe(0);
  });

  it("resolves at once for an aborted signal or no time", async () => {
    const started = performance.now();
    await sleep(10_000, AbortSignal.abort());
    await sleep(0);
    await sleep(-5);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe("wakeableSleep", () => {
  it("a wake ends it at once; the waker is unregistered exactly once, and a later wake does nothing", async () => {
    const waiters = new Set<() => void>();
    let released = 0;
    const waiting = wakeableSleep(10_000, (wake) => {
      waiters.add(wake);
      return () => {
        released += 1;
        waiters.delete(wake);
      };
    });
    expect(waiters.size).toBe(1);
    const [wake] = [...waiters];
    const started = performance.now();
    wake?.();
    await waiting;
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(waiters.size).toBe(0);
    wake?.();
    expect(released).toBe(1);
  });

  it("without a wake it ends after its time and unregisters; a wake during hold still unregisters", async () => {
    let released = 0;
    const started = performance.now();
    await wakeableSleep(40, () => () => (released += 1));
    expect(performance.now() - started).toBeGreaterThanOrEqual(35);
    expect(released).toBe(1);
    let releasedEarly = 0;
    await wakeableSleep(10_000, (wake) => {
      wake();
      return () => (releasedEarly += 1);
    });
    expect(releasedEarly).toBe(1);
  });
});
