/**
 * @module
 * Whether `serve` can listen where it is told, found before it writes anything under --data: a
 * port another server holds (an `npm start` still running) left a new data folder and a
 * secrets.json behind, whose keys the server answering on that port does not know.
 */
import { createServer } from "node:net";

/**
 * Listens on `host:port` and lets it go at once; rejects with the runtime's error when that
 * address cannot be bound (the port taken, the host no address of this machine). Port 0 checks the host.
 */
export function probeAddress(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen({ host, port }, () => probe.close(() => resolve()));
  });
}
