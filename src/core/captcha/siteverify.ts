/**
 * @module
 * A `CaptchaVerifier` for siteverify-style services (Cloudflare Turnstile by default; hCaptcha
 * and reCAPTCHA answer the same form): posts `secret`, `response` and `remoteip`, with a
 * timeout so an unreachable service is a clear error rather than a hanging request.
 */
import type { CaptchaOutcome, CaptchaVerifier } from "../ports.ts";
import { CaptchaResponseSchema } from "../schemas/captcha.ts";
import { ServiceError } from "../errors.ts";
import { isTimeout } from "../outbound/timeout.ts";
import { fetchRefusingRedirects } from "../outbound/no-redirects.ts";

/** Options of {@link createSiteverifyVerifier}. */
export interface SiteverifyOptions {
  /** The siteverify endpoint (`CAPTCHA_VERIFY_URL`). */
  url: string;
  /** `CAPTCHA_SECRET`; unset makes every verification a 500 that says so. */
  secret: string | undefined;
  /** How long to wait for the service before failing (`CAPTCHA_TIMEOUT_MS`). */
  timeoutMs: number;
  /** For tests and runtimes with a custom fetch. */
  fetch?: typeof fetch;
}

/** Creates a verifier that asks the siteverify endpoint at `url`. */
export function createSiteverifyVerifier(options: SiteverifyOptions): CaptchaVerifier {
  const doFetch = options.fetch ?? fetch;
  return {
    async verify(token, remoteIp): Promise<CaptchaOutcome> {
      if (options.secret === undefined) {
        throw ServiceError.server("CAPTCHA_SECRET is not configured on this service");
      }
      const form = new URLSearchParams({ secret: options.secret, response: token });
      if (remoteIp !== undefined) form.set("remoteip", remoteIp);
      let response: Response;
      try {
        response = await fetchRefusingRedirects(doFetch, options.url, {
          method: "POST",
          body: form,
          signal: AbortSignal.timeout(options.timeoutMs),
        });
      } catch (err) {
        throw ServiceError.server(
          isTimeout(err)
            ? `Captcha verification service did not answer within ${options.timeoutMs} ms`
            : "Captcha verification service could not be reached",
        );
      }
      const body: unknown = await response.json().catch(() => undefined);
      const parsed = CaptchaResponseSchema.safeParse(body);
      if (!parsed.success) {
        throw ServiceError.server(`Captcha verification service gave an unusable answer (HTTP ${response.status})`);
      }
      return parsed.data;
    },
  };
}
