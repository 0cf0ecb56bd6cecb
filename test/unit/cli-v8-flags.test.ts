import { describe, expect, it } from "vitest";
import { v8FlagsFor } from "../../src/cli/v8-flags.js";

describe("the CLI's V8 flags", () => {
  it("compiles the embedded engine with the baseline tier only for short-lived commands", () => {
    for (const argv of [["run", "a task"], ["demo"], ["show", "id", "--json"], ["--version"], [], ["approve", "id"], ["graphs"], ["migrate", "--status"]]) {
      expect(v8FlagsFor(argv), argv.join(" ")).toEqual(["--liftoff-only"]);
    }
  });

  it("keeps the optimizing tier for the long-lived serve and worker", () => {
    expect(v8FlagsFor(["serve", "--port", "8080"])).toEqual([]);
    expect(v8FlagsFor(["worker"])).toEqual([]);
    expect(v8FlagsFor(["--verbose", "worker"])).toEqual([]);
    // a task that happens to say "serve" is not the command
    expect(v8FlagsFor(["run", "serve"])).toEqual(["--liftoff-only"]);
  });
});
