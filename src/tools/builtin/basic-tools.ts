import { z } from "zod";
import { DEMO_TEXT } from "../../constants.js";
import { defineTool, type Tool } from "../define-tool.js";
import { ToolFailure } from "../tool-failure.js";
import { quote } from "../tool-result.js";

/**
 * `add {a, b}` -> `{sum}`: the smallest useful tool, for demos and tests of the tool loop.
 * [side effect none / no approval / idempotent]
 */
export function addTool(): Tool {
  return defineTool({
    name: "add",
    description: "Add two numbers and return their sum.",
    schema: z.object({
      a: z.number().describe("first addend"),
      b: z.number().describe("second addend"),
    }),
    sideEffect: "none",
    approval: false,
    idempotent: true,
    async execute({ a, b }) {
      const sum = a + b;
      if (!Number.isFinite(sum)) throw new ToolFailure("TOOL_FAILED", "the sum is too large to represent");
      return { sum };
    },
  });
}

/**
 * `get_current_time {timezone = "UTC"}` -> `{timezone, iso, local}`: `iso` is the UTC instant,
 * `local` the same instant as wall-clock time in the zone with its offset
 * (`2024-01-15T21:00:00+09:00`). An unknown zone is INVALID_ARGUMENTS naming it.
 * [none / no / idempotent]. `now` is injectable for tests.
 */
export function currentTimeTool(now: () => Date = () => new Date()): Tool {
  return defineTool({
    name: "get_current_time",
    description: "Get the current date and time in an IANA time zone (for example Europe/Paris, America/New_York, UTC).",
    schema: z.object({
      timezone: z
        .string()
        .refine(isTimeZone, {
          error: (issue) => `unknown time zone ${quote(String(issue.input), 100)}; use an IANA name such as "Europe/Paris" or "UTC"`,
        })
        .default("UTC")
        .describe("IANA time zone name"),
    }),
    sideEffect: "none",
    approval: false,
    idempotent: true,
    async execute({ timezone }) {
      const instant = now();
      const zone = new Intl.DateTimeFormat("en-US", { timeZone: timezone }).resolvedOptions().timeZone;
      return { timezone: zone, iso: instant.toISOString(), local: localIso(instant, zone) };
    },
  });
}

/**
 * `read_demo_text {}` -> `{title, text}`: a fixed text about devmind (constants.ts `DEMO_TEXT`),
 * so the offline demo has something to summarise. [none / no / idempotent]
 */
export function demoTextTool(): Tool {
  return defineTool({
    name: "read_demo_text",
    description: "Return a short fixed text about devmind, useful for trying out summarisation.",
    schema: z.object({}),
    sideEffect: "none",
    approval: false,
    idempotent: true,
    async execute() {
      return { title: "About devmind", text: DEMO_TEXT };
    },
  });
}

/** True when Intl knows `zone` (IANA names, case-insensitive, and whatever else ICU accepts). */
function isTimeZone(zone: string): boolean {
  if (zone === "" || zone.length > 100) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** `instant` as local wall-clock time in `timeZone`, ISO 8601 with the zone's offset. */
function localIso(instant: Date, timeZone: string): string {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
    timeZoneName: "longOffset",
  }).formatToParts(instant);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? "";
  const offset = part("timeZoneName").replace(/^GMT/, "") || "+00:00";
  return `${part("year")}-${part("month")}-${part("day")}T${part("hour")}:${part("minute")}:${part("second")}${offset}`;
}
