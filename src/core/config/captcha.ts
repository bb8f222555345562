/**
 * @module
 * The CAPTCHA verification service the captcha worker asks.
 */
import * as z from "zod";
import { camelKeys, httpUrl, MAX_TIMER_MS, positiveInt, text, variable } from "./variables.ts";

/** The captcha variables. */
export const CaptchaSection = z.object({
  CAPTCHA_SECRET: variable(text(), "the secret sent to the verification service; never returned by the keys worker", {
    usedBy: "captcha",
    defaultText: "unset (every check is a 500)",
    typeText: "secret",
  }),
  CAPTCHA_VERIFY_URL: variable(httpUrl().default("https://challenges.cloudflare.com/turnstile/v0/siteverify"), "the verification endpoint: any siteverify-style service", {
    usedBy: "captcha",
  }),
  CAPTCHA_TIMEOUT_MS: variable(positiveInt(10_000, MAX_TIMER_MS), "how long to wait for it, in milliseconds; then a clear 500", { usedBy: "captcha" }),
}).transform(camelKeys);

/** What {@link CaptchaSection} parses. */
export type CaptchaConfig = z.output<typeof CaptchaSection>;
