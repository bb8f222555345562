/**
 * @module
 * A yes/no query parameter as the routes take it: absent, `true` or `false` (anything else is a
 * 400 naming it), documented with what it does.
 */
import * as z from "zod";

/** The optional `true`/`false` query parameter `description` explains. */
export const queryFlag = (description: string) => z.enum(["true", "false"]).optional().describe(description);
