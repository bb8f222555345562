/**
 * @module
 * How the commands end on a failure (README, Commands): bad usage is exit 2 with the
 * command's usage, a bad value or configuration exit 2 in one line, anything else exit 1.
 */

/** Bad usage of a command: its message, then the command's usage text (exit 2). */
export class UsageError extends Error {}

/** What {@link commandFailure} writes to and how. */
export interface FailureWording {
  /** The command's usage text, written after a {@link UsageError}'s message. */
  usage: string;
  /** Errors that are the user's input (configuration, paths, values): one line, exit 2. */
  input: readonly (abstract new (...args: never[]) => Error)[];
  /** How an input error's message is written; default as it is. */
  inputLine?: (message: string) => string;
  /** How any other failure's message is written; default as it is. */
  otherLine?: (message: string) => string;
}

/** Writes a command's failure to `err` and answers its exit code. */
export function commandFailure(err: unknown, out: { write(text: string): unknown }, wording: FailureWording): number {
  if (err instanceof UsageError) {
    out.write(`${err.message}\n\n${wording.usage}`);
    return 2;
  }
  if (wording.input.some((kind) => err instanceof kind)) {
    out.write(`${(wording.inputLine ?? String)((err as Error).message)}\n`);
    return 2;
  }
  const message = err instanceof Error ? err.message : String(err);
  out.write(`${(wording.otherLine ?? String)(message)}\n`);
  return 1;
}
