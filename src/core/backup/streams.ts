/**
 * @module
 * The backup and the restore as streams, for a running service's routes
 * (docs/operations.md#backups-through-a-running-service): {@link backupStream} is
 * {@link writeBackup} read as a body, pulled as the client reads (memory holds one chunk, not
 * the archive); {@link restoreLines} is {@link restoreArchive} told as NDJSON lines, so a long
 * restore answers at once and shows its progress.
 */
import { type BackupOptions, writeBackup } from "./backup.ts";
import type { NamedStore } from "./stores.ts";
import { redactSecrets } from "../errors.ts";
import { restoreArchive, RestoreRefusal, type RestoreOptions, type RestoreTarget } from "./restore.ts";

const encoder = new TextEncoder();

/** The archive of `stores` as a stream; the backup waits while the reader does not read, and stops when it cancels. */
export function backupStream(stores: readonly NamedStore[], options: BackupOptions): ReadableStream<Uint8Array> {
  let wanted: (() => void) | undefined;
  let cancelled = false;
  let running: Promise<void> | undefined;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const waiting = wanted;
      wanted = undefined;
      waiting?.();
      running ??= writeBackup(stores, async (chunk) => {
        if (cancelled) throw new Error("the backup's reader went away");
        controller.enqueue(chunk.slice());
        // Until the reader wants more: one chunk queued at most.
        if ((controller.desiredSize ?? 0) <= 0) await new Promise<void>((resolve) => (wanted = resolve));
      }, options).then(() => controller.close(), (err: unknown) => {
        // A broken body: the client's archive is incomplete and is refused (cut short), never taken as whole.
        if (!cancelled) controller.error(err);
      });
    },
    cancel() {
      cancelled = true;
      wanted?.();
    },
  }, { highWaterMark: 1 });
}

/** One line of a restore's answer. */
export type RestoreLine =
  | { phase: "checking" | "writing" | "verifying" }
  | { objects: number; bytes: number }
  | { restored: { objects: number; written: number; alreadyThere: number; counts: Record<string, number>; trails: { verified: number; total: number } } }
  | { refused: string }
  | { failed: string };

/**
 * {@link restoreArchive} as NDJSON lines (the phases, progress at most once a second, then one of
 * `restored`, `refused` or `failed`); `onEnd` is called once the last line is queued.
 */
export function restoreLines(
  open: () => ReadableStream<Uint8Array>,
  target: RestoreTarget,
  options: RestoreOptions,
  onEnd: () => Promise<void>,
): ReadableStream<Uint8Array> {
  // A client that goes away (or stops reading at the outcome) does not stop the restore: its lines go nowhere.
  let reading = true;
  return new ReadableStream<Uint8Array>({
    cancel() {
      reading = false;
    },
    start(controller) {
      const line = (value: RestoreLine) => {
        if (!reading) return;
        try {
          controller.enqueue(encoder.encode(`${JSON.stringify(value)}\n`));
        } catch {
          reading = false;
        }
      };
      let shownAt = 0;
      const progress = (at: { objects: number; bytes: number }) => {
        const now = Date.now();
        if (now - shownAt < 1000) return;
        shownAt = now;
        line({ objects: at.objects, bytes: at.bytes });
      };
      // Runs after start returns: the answer's headers go out at once.
      void (async () => {
        try {
          const summary = await restoreArchive(open, target, { ...options, onPhase: (phase) => line({ phase }), onProgress: progress, onWritten: progress });
          line({
            restored: {
              objects: summary.manifest.objects,
              written: summary.written,
              alreadyThere: summary.alreadyThere,
              counts: summary.counts,
              trails: { verified: summary.trails.filter((trail) => trail.valid).length, total: summary.trails.length },
            },
          });
          await onEnd().catch(() => undefined);
        } catch (err) {
          if (err instanceof RestoreRefusal) {
            line({ refused: err.message });
            await onEnd().catch(() => undefined);
          } else {
            // Told to the administrator who asked, as a 5xx's cause is logged: credentials in it redacted.
            const message = redactSecrets(err instanceof Error ? err.message : String(err));
            line({ failed: `${message}; run the restore again with --resume once it is fixed` });
            await onEnd().catch(() => undefined);
          }
        }
        if (reading) {
          reading = false;
          try {
            controller.close();
          } catch {
            // cancelled meanwhile
          }
        }
      })();
    },
  });
}
