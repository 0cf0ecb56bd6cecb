import { CronExpressionParser } from "cron-parser";
import { CRON_DEFAULTS } from "../../constants.js";
import { runInputError } from "../queue/run-record.js";

/** A validated schedule: a standard 5-field cron expression read in an IANA time zone (UTC when null). */
export interface CronSchedule {
  schedule: string;
  timezone: string | null;
}

const FIELD_NAMES = ["minute", "hour", "day of month", "month", "day of week"] as const;

/**
 * Checks a 5-field cron expression (`minute hour day-of-month month day-of-week`, as crontab:
 * `*`, lists, ranges, steps, month and day names) and an IANA time zone. Throws RUN_INPUT_INVALID
 * with `details.field` `schedule` or `timezone`. Six-field (seconds) and macro forms are refused:
 * the LangGraph API schedules in minutes.
 */
export function checkCronSchedule(schedule: unknown, timezone: unknown): CronSchedule {
  if (typeof schedule !== "string" || schedule.trim() === "" || schedule.length > CRON_DEFAULTS.maxScheduleChars) {
    throw runInputError(`schedule must be a cron expression of at most ${CRON_DEFAULTS.maxScheduleChars} characters`, { field: "schedule" });
  }
  const fields = schedule.trim().split(/\s+/);
  if (fields.length !== FIELD_NAMES.length) {
    throw runInputError(`schedule must have 5 fields (${FIELD_NAMES.join(", ")}), got ${fields.length}: ${JSON.stringify(schedule)}`, { field: "schedule" });
  }
  const zone = checkTimezone(timezone);
  try {
    CronExpressionParser.parse(fields.join(" "), { tz: zone ?? "UTC" });
  } catch (error) {
    throw runInputError(`schedule ${JSON.stringify(schedule)} is not a valid cron expression: ${(error as Error).message}`, { field: "schedule" });
  }
  return { schedule: fields.join(" "), timezone: zone };
}

/** An IANA time zone name (`Europe/Paris`, `UTC`), or null when absent; RUN_INPUT_INVALID naming `timezone` otherwise. */
export function checkTimezone(timezone: unknown): string | null {
  if (timezone === undefined || timezone === null) return null;
  if (typeof timezone !== "string" || timezone === "" || timezone.length > CRON_DEFAULTS.maxTimezoneChars) {
    throw runInputError(`timezone must be an IANA time zone name such as "Europe/Paris"`, { field: "timezone" });
  }
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
  } catch {
    throw runInputError(`timezone ${JSON.stringify(timezone)} is not a known IANA time zone`, { field: "timezone" });
  }
  return timezone;
}

/** An ISO-8601 date-time for `end_time`, or null when absent; RUN_INPUT_INVALID naming `end_time` otherwise. */
export function checkEndTime(endTime: unknown): Date | null {
  if (endTime === undefined || endTime === null) return null;
  const date = typeof endTime === "string" && endTime.length <= 64 ? new Date(endTime) : endTime instanceof Date ? endTime : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) throw runInputError(`end_time must be an ISO-8601 date-time, got ${JSON.stringify(String(endTime).slice(0, 80))}`, { field: "end_time" });
  return date;
}

/**
 * The first tick of `schedule` strictly after `after`, or null when there is none at or before
 * `endTime`. The scheduler calls it with the database's `now()`, so ticks missed while no worker
 * ran are skipped: a late cron fires once, then waits for its next future tick.
 */
export function nextTick(schedule: CronSchedule, after: Date, endTime: Date | null): Date | null {
  const expression = CronExpressionParser.parse(schedule.schedule, { currentDate: after, tz: schedule.timezone ?? "UTC" });
  if (!expression.hasNext()) return null;
  const next = expression.next().toDate();
  return endTime !== null && next.getTime() > endTime.getTime() ? null : next;
}
