/**
 * @module
 * The operator's configuration mistakes.
 */

/**
 * A configuration problem, naming each bad variable. The operator's mistake, not a
 * client's: it is no `ServiceError`, so a request never sees it.
 */
export class ConfigError extends Error {
  /** Builds the error from one problem per bad variable (`NAME: why`). */
  constructor(readonly problems: string[]) {
    super(`Invalid configuration: ${problems.join("; ")}`);
    this.name = "ConfigError";
  }
}
