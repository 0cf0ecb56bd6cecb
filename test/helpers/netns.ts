import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";

/**
 * Network namespaces for the partition test (test/int/partition.int.test.ts): each worker process
 * runs in a namespace of its own (`ip netns`), joined to the root namespace by a veth pair with
 * addresses in a /30 of a small private subnet made for the test run. PostgreSQL stays on
 * 127.0.0.1: the worker reaches it through a TCP forwarder (test/helpers/pg-proxy.ts) bound to
 * the root side of its veth. Packets are dropped by an nftables table inside the namespace (the
 * machine's own firewall is not touched): a share of them at random (loss), or all of them (a
 * partition: nothing arrives, nothing is refused, the process lives on). `tc netem` is not used
 * for loss or delay because kernels without sch_netem (this CI's VM) refuse it; latency is the
 * forwarder's (`delayMs`), per direction.
 *
 * Names are unique per test run (`dm<hex>`); `close()` deletes the namespace, which removes its
 * veth pair and its nftables table with it.
 */
export interface WorkerNet {
  /** The namespace's name, for `ip netns exec`. */
  readonly ns: string;
  /** The root side's address: the forwarder listens here. */
  readonly hostAddress: string;
  /** The worker's own address inside the namespace. */
  readonly nsAddress: string;
  /** `ip netns exec <ns>`: the prefix of a command run inside the namespace. */
  readonly exec: string[];
  /** Drops every packet to and from the namespace (silently: no RST, no ICMP) until `heal()`. */
  partition(): void;
  /** Ends a partition (the loss set by `setLoss` applies again). */
  heal(): void;
  /** Drops this share (0..1) of the packets in each direction, at random. */
  setLoss(share: number): void;
  /** Packets dropped by the rules so far (both directions). */
  dropped(): number;
  /** Deletes the namespace with its veth pair and rules (idempotent). */
  close(): void;
}

function run(command: string, args: string[], input?: string): string {
  const result = spawnSync(command, args, { encoding: "utf8", input, timeout: 10_000 });
  if (result.error !== undefined) throw result.error;
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${result.status}): ${result.stderr.trim()}`);
  return result.stdout;
}

/**
 * Why namespaces cannot be made here (not root, no `ip` or `nft`, the kernel refuses), or null
 * when they can: it makes and deletes a probe namespace with a veth pair and an nftables table.
 */
export function netnsUnavailableReason(): string | null {
  if (process.platform !== "linux") return `not Linux (${process.platform})`;
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return "not root (ip netns needs CAP_SYS_ADMIN and CAP_NET_ADMIN)";
  for (const tool of ["ip", "nft"]) {
    if (spawnSync(tool, ["-V"], { encoding: "utf8" }).error !== undefined) return `no \`${tool}\` (install ${tool === "ip" ? "iproute2" : "nftables"})`;
  }
  const probe = `dmp${randomBytes(4).toString("hex")}`;
  try {
    run("ip", ["netns", "add", probe]);
    run("ip", ["link", "add", `${probe}h`, "type", "veth", "peer", "name", `${probe}n`]);
    run("ip", ["link", "set", `${probe}n`, "netns", probe]);
    run("ip", ["netns", "exec", probe, "nft", "-f", "-"], "table inet probe {\n chain output {\n type filter hook output priority 0; policy accept;\n }\n}\n");
    return null;
  } catch (error) {
    return `cannot make a network namespace: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    spawnSync("ip", ["link", "del", `${probe}h`]);
    spawnSync("ip", ["netns", "del", probe]);
  }
}

/** Namespaces of one test run, on one /24 of 10.213.0.0/16 that no interface of the machine uses. */
export class NetnsLab {
  readonly id = randomBytes(3).toString("hex");
  private readonly nets: WorkerNet[] = [];
  private readonly subnet: string;

  constructor() {
    const used = run("ip", ["-4", "-o", "addr", "show"]);
    let third = 0;
    for (let tries = 0; tries < 50; tries += 1) {
      third = 1 + Math.floor(Math.random() * 254);
      if (!used.includes(` 10.213.${third}.`)) break;
    }
    this.subnet = `10.213.${third}`;
    // a test process that ends without its afterAll (an uncaught error) still deletes them
    process.once("exit", () => {
      for (const net of this.nets) net.close();
    });
  }

  /** A namespace for worker `index` (0..62), its veth pair up, both ends addressed. */
  add(index: number): WorkerNet {
    const ns = `dm${this.id}w${index}`;
    const hostDev = `${ns}h`;
    const nsDev = `${ns}n`;
    const hostAddress = `${this.subnet}.${index * 4 + 1}`;
    const nsAddress = `${this.subnet}.${index * 4 + 2}`;
    let closed = false;
    let loss = 0;
    let cut = false;
    const close = (): void => {
      if (closed) return;
      closed = true;
      // deleting the namespace deletes its end of the pair, and with it the other end
      spawnSync("ip", ["link", "del", hostDev]);
      spawnSync("ip", ["netns", "del", ns]);
    };
    const net: WorkerNet = {
      ns,
      hostAddress,
      nsAddress,
      exec: ["ip", "netns", "exec", ns],
      partition() {
        cut = true;
        apply();
      },
      heal() {
        cut = false;
        apply();
      },
      setLoss(share) {
        loss = share;
        apply();
      },
      dropped() {
        return droppedBefore + counted();
      },
      close,
    };
    // the rules' counters count drops only; a new rule set starts them at 0, so the old count is kept
    let droppedBefore = 0;
    let applied = false;
    const counted = (): number => {
      if (!applied) return 0;
      const text = run("ip", ["netns", "exec", ns, "nft", "list", "table", "inet", "devmind_test"]);
      return [...text.matchAll(/counter packets (\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
    };
    const apply = (): void => {
      droppedBefore += counted();
      applied = true;
      const drop = cut ? "counter drop" : loss > 0 ? `numgen random mod 10000 < ${Math.round(loss * 10_000)} counter drop` : null;
      run(
        "ip",
        ["netns", "exec", ns, "nft", "-f", "-"],
        [
          "flush table inet devmind_test",
          "table inet devmind_test {",
          "  chain input {",
          "    type filter hook input priority 0; policy accept;",
          ...(drop === null ? [] : [`    iifname "${nsDev}" ${drop}`]),
          "  }",
          "  chain output {",
          "    type filter hook output priority 0; policy accept;",
          ...(drop === null ? [] : [`    oifname "${nsDev}" ${drop}`]),
          "  }",
          "}",
          "",
        ].join("\n"),
      );
    };
    this.nets.push(net);
    try {
      run("ip", ["netns", "add", ns]);
      run("ip", ["link", "add", hostDev, "type", "veth", "peer", "name", nsDev]);
      run("ip", ["link", "set", nsDev, "netns", ns]);
      run("ip", ["addr", "add", `${hostAddress}/30`, "dev", hostDev]);
      run("ip", ["link", "set", hostDev, "up"]);
      run("ip", ["netns", "exec", ns, "ip", "link", "set", "lo", "up"]);
      run("ip", ["netns", "exec", ns, "ip", "addr", "add", `${nsAddress}/30`, "dev", nsDev]);
      run("ip", ["netns", "exec", ns, "ip", "link", "set", nsDev, "up"]);
      run("ip", ["netns", "exec", ns, "nft", "add", "table", "inet", "devmind_test"]);
      apply();
    } catch (error) {
      close();
      throw error;
    }
    return net;
  }

  /** Deletes every namespace of this run (idempotent); then none of this run's names is left. */
  close(): string[] {
    for (const net of this.nets) net.close();
    const left = run("ip", ["netns", "list"]).split("\n").filter((line) => line.startsWith(`dm${this.id}`));
    const links = run("ip", ["-o", "link", "show"]).split("\n").filter((line) => line.includes(`dm${this.id}`));
    return [...left, ...links];
  }
}
