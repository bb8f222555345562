/**
 * @module
 * Audit days: the UTC calendar days that name the daily files, and the ranges GET reads.
 */
import { ServiceError } from "../http/errors.ts";

/** The longest range one GET may read, in days (both ends included). */
export const MAX_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;

/** The UTC day of a time, as `YYYY-MM-DD`. */
export function utcDay(time: Date): string {
  return time.toISOString().slice(0, 10);
}

/**
 * The days from `startDate` to `endDate`, both included. Either end defaults to today;
 * a start after the end, or more than {@link MAX_RANGE_DAYS} days, is a 400.
 */
export function auditDayRange(startDate: string | undefined, endDate: string | undefined, today: Date): string[] {
  const start = startDate ?? endDate ?? utcDay(today);
  const end = endDate ?? (startDate === undefined ? start : utcDay(today));
  const first = Date.parse(`${start}T00:00:00Z`);
  const last = Date.parse(`${end}T00:00:00Z`);
  if (first > last) {
    throw ServiceError.validation("startDate must not be after endDate", { startDate: start, endDate: end });
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
