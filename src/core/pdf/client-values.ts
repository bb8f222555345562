/**
 * @module
 * What clients in the field send for "no value" in a report request: the Striae client
 * passes its notes form's state on, so an unset colour, class or number arrives as `""` or
 * `null`, and a request without annotations may omit `annotationData`; older clients name
 * the footer's lab `company` rather than `userCompany`. Those mean absent (or the same);
 * anything else still meets the schema (a real bad colour stays a 400).
 */

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** The fields of `record` without those that are `null` or `""`. */
function withoutEmpty(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null && value !== ""));
}

/** A report request with "no value" fields dropped and a missing `annotationData` as null. */
export function normaliseClientValues(value: unknown): unknown {
  if (!isRecord(value)) return value;
  const annotationData = value.annotationData;
  const { company, ...rest } = value;
  return {
    ...rest,
    ...(rest.userCompany === undefined && typeof company === "string" ? { userCompany: company } : {}),
    annotationData: annotationData === undefined || annotationData === null
      ? null
      : isRecord(annotationData) ? withoutEmpty(annotationData) : annotationData,
  };
}
