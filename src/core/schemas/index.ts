/** Every resource schema of docs/api.md, one file per resource. */
export * from "./error.ts";
export * from "./audit.ts";
export * from "./captcha.ts";
export * from "./user.ts";
export * from "./case.ts";
export * from "./annotation.ts";
export * from "./image.ts";
export * from "./pdf.ts";
export * from "./exchange.ts";
export * from "./history.ts";
export * from "./review.ts";
