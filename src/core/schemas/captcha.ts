import * as z from "zod";

const token = z.string().min(1, "token is empty").max(4096);

/** Body of POST / of the captcha worker (docs/api.md#captcha-worker); existing clients send `cf-turnstile-response`. */
export const CaptchaRequestSchema = z
  .looseObject({
    "captcha-response": token.optional(),
    "cf-turnstile-response": token.optional(),
  })
  .refine((body) => body["captcha-response"] !== undefined || body["cf-turnstile-response"] !== undefined, {
    message: "captcha-response is required",
    path: ["captcha-response"],
  })
  .meta({ id: "CaptchaRequest" });
export type CaptchaRequest = z.infer<typeof CaptchaRequestSchema>;

/** Answer of the captcha worker and of the verification service (docs/api.md#captcha-worker). */
export const CaptchaResponseSchema = z.object({
  success: z.boolean(),
  "error-codes": z.array(z.string()).default([]),
  challenge_ts: z.string().optional(),
  hostname: z.string().optional(),
}).meta({ id: "CaptchaResult" });
export type CaptchaResponse = z.infer<typeof CaptchaResponseSchema>;
