import { describe, expect, it } from "vitest";
import { parsePgUrl } from "../../src/db/pg-url.js";

describe("parsePgUrl: PostgreSQL URLs with one host or several (libpq's form)", () => {
  it("reads the hosts in order, each with its port (5432 by default), and target_session_attrs", () => {
    const url = parsePgUrl("postgres://dev:s3cret@db1:5433,db2,[::1]:6000/app?sslmode=disable&target_session_attrs=read-write");
    expect(url.hosts).toEqual([
      { host: "db1", port: 5433 },
      { host: "db2", port: 5432 },
      { host: "::1", port: 6000 },
    ]);
    expect(url.targetSessionAttrs).toBe("read-write");
    expect(url.hosts.map((h) => url.nameOf(h))).toEqual(["db1:5433", "db2:5432", "[::1]:6000"]);
    // one URL per host for node-postgres, the password kept and target_session_attrs dropped
    expect(url.urlFor(url.hosts[1] as { host: string; port: number })).toBe("postgres://dev:s3cret@db2:5432/app?sslmode=disable");
    expect(url.urlFor(url.hosts[2] as { host: string; port: number })).toBe("postgres://dev:s3cret@[::1]:6000/app?sslmode=disable");
    expect(url.printable).toBe("postgres://dev:***@db1:5433,db2,[::1]:6000/app?sslmode=disable&target_session_attrs=read-write");
    expect(url.password).toBe("s3cret");
  });

  it("keeps a single-host URL exactly as given, and reads `primary` as read-write and no attribute as any", () => {
    const single = parsePgUrl("postgresql://u:p%40ss@localhost/db");
    expect(single.hosts).toEqual([{ host: "localhost", port: 5432 }]);
    expect(single.urlFor(single.hosts[0] as { host: string; port: number })).toBe("postgresql://u:p%40ss@localhost/db");
    expect(single.targetSessionAttrs).toBe("any");
    expect(parsePgUrl("postgres://h1,h2/db?target_session_attrs=primary").targetSessionAttrs).toBe("read-write");
  });

  it("refuses what devmind cannot serve, naming the variable", () => {
    expect(() => parsePgUrl("postgres://h1,h2/db?target_session_attrs=standby")).toThrow("DATABASE_URL has target_session_attrs=standby: devmind writes");
    expect(() => parsePgUrl("postgres://h1,h2:99999/db", "DEVMIND_DATABASE_DIRECT_URL")).toThrow('DEVMIND_DATABASE_DIRECT_URL has a port out of range in "h2:99999"');
    expect(() => parsePgUrl("postgres://h1,,h2/db")).toThrow('has a host list entry "" that is not HOST[:PORT]');
    expect(() => parsePgUrl("mysql://h1/db")).toThrow("must start with postgres:// or postgresql://");
    expect(() => parsePgUrl("postgres:///db")).toThrow("has no host");
    expect(() => parsePgUrl("postgres://h1,h2/db")).not.toThrow();
  });
});
