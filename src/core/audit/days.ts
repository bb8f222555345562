/**
 * @module
 * Audit days: the UTC calendar days that name the daily files, and the ranges GET reads.
 */
import { ServiceError } from "../errors.ts";
import { utcDayOf } from "../schemas/audit.ts";

/** The longest range one GET may read, in days (both ends included). */
export const MAX_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;

/** The UTC day of a time, as `YYYY-MM-DD`. */
export function utcDay(time: Date): string {
  return time.toISOString().slice(0, 10);
}

/**
 * The UTC days from `startDate` to `endDate`, both included. Each bound is an ISO 8601 date or
 * date-time and stands for its UTC day, so the range covers both instants whatever their time
 * of day. Either end defaults to today; a start day after the end day, or more than
 * {@link MAX_RANGE_DAYS} days, is a 400.
 */
export function auditDayRange(startDate: string | undefined, endDate: string | undefined, today: Date): string[] {
  const dayOf = (value: string | undefined, field: string): string | undefined => {
    if (value === undefined) return undefined;
    const day = utcDayOf(value);
    if (day === undefined) throw ServiceError.validation(`${field} must be an ISO 8601 date or date-time`, { field, value });
    return day;
  };
  const startDay = dayOf(startDate, "startDate");
  const endDay = dayOf(endDate, "endDate");
  const start = startDay ?? endDay ?? utcDay(today);
  const end = endDay ?? (startDay === undefined ? start : utcDay(today));
  const first = Date.parse(`${start}T00:00:00Z`);
  const last = Date.parse(`${end}T00:00:00Z`);
  if (first > last) {
    throw ServiceError.validation("startDate must not be after endDate (compared by UTC day)", { startDate: start, endDate: end });
  }
  const count = (last - first) / DAY_MS + 1;
  if (count > MAX_RANGE_DAYS) {
    throw ServiceError.validation(`A date range may span at most ${MAX_RANGE_DAYS} days`, {
      startDate: start,
      endDate: end,
      days: count,
    });
  }
  return Array.from({ length: count }, (_, i) => utcDay(new Date(first + i * DAY_MS)));
}
