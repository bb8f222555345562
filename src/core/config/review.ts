/**
 * @module
 * Review inside the service (docs/review.md): how fresh an authentication a signature needs.
 */
import * as z from "zod";
import { camelKeys, variable, wholeNumber } from "./variables.ts";

/** The review variables. */
export const ReviewSection = z.object({
  SIGNATURE_MAX_AUTH_AGE_SECONDS: variable(
    wholeNumber(300, 1, 86_400),
    "the oldest authentication (the identity token's `auth_time`) a review signature accepts, in seconds; older: 401 `reauthentication required` ([review](docs/review.md))",
    { usedBy: "review" },
  ),
}).transform(camelKeys);

/** What {@link ReviewSection} parses. */
export type ReviewConfig = z.output<typeof ReviewSection>;
