/**
 * @module
 * The flags every command on the stores shares (docs/operations.md#commands-against-a-running-service):
 * where the stores are (`--data`), or the running service to go through (`--url`, with the
 * worker keys from `--key-file` or the environment), JSON output and help.
 */

/** `parseArgs` options of `--data`, `--url`, `--key-file`, `--json` and `--help`; a command adds its own beside them. */
export const STORE_COMMAND_OPTIONS = {
  data: { type: "string", default: "./.forensic-data" },
  url: { type: "string" },
  "key-file": { type: "string" },
  json: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const;
