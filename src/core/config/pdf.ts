/**
 * @module
 * The PDF report: where its image may come from, how long the fetch may take, the footer's name.
 */
import * as z from "zod";
import { camelKeys, commaList, MAX_TIMER_MS, positiveInt, variable } from "./variables.ts";

/** The PDF variables. */
export const PdfSection = z.object({
  PDF_IMAGE_HOSTS: variable(
    z.string().optional().transform((value): readonly string[] | undefined => value === undefined ? undefined : commaList(value)),
    "hosts the report's image may come from ([image sources](docs/report.md#image-sources)); `data:` URLs always work",
    {
      usedBy: "pdf",
      defaultText: "the `PUBLIC_URL` host and `IMAGE_DELIVERY_HOST`",
      typeText: "comma-separated `host`, `host:port`, `[v6]:port` or URLs",
    },
  ),
  PDF_IMAGE_TIMEOUT_MS: variable(positiveInt(10_000, MAX_TIMER_MS), "how long the image fetch may take, redirects included, in milliseconds; then 504", { usedBy: "pdf" }),
  PDF_SERVICE_NAME: variable(
    z.string().trim().min(1).max(100).default("Forensic Annotation Service"),
    "the name in the footer's \"Notes formatted by …\" (trimmed)",
    { usedBy: "pdf" },
  ),
}).transform(camelKeys);

/** What {@link PdfSection} parses. */
export type PdfConfig = z.output<typeof PdfSection>;
