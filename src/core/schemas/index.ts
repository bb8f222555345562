/** Every resource schema of spec section 2, one file per resource. */
export * from "./error.ts";
export * from "./audit.ts";
export * from "./captcha.ts";
