/**
 * @module
 * Which image URLs the PDF worker may fetch (docs/report.md#request, `PDF_IMAGE_HOSTS`): only
 * `http:`/`https:` URLs on a listed host. An unlisted DNS name is refused before any
 * connection, as nothing can check where it resolves from inside a worker; an unlisted
 * loopback, private, link-local (cloud metadata), shared or reserved address literal is
 * refused with its kind named. A listed host is trusted whatever it is.
 *
 * @example
 * ```ts
 * const hosts = parseHostList(["images.lab.example", "127.0.0.1:8787"]);
 * checkImageUrl(new URL("http://169.254.169.254/latest/meta-data"), hosts); // throws a 400
 * ```
 */
import { ServiceError } from "../../errors.ts";

/** One allowed host: a name or address, and the one port allowed when the entry names it. */
export interface HostEntry {
  /** Lower-case host as the URL parser writes it (`[::1]` for IPv6, dotted quad for IPv4). */
  hostname: string;
  /** The port the entry allows, or undefined for any port. */
  port: string | undefined;
}

const DEFAULT_PORTS: Record<string, string> = { "http:": "80", "https:": "443" };

const bare = (hostname: string): string => hostname.toLowerCase().replace(/\.$/, "");

/**
 * Parses allow-list entries: `host`, `host:port`, `[v6]:port` or a whole URL (its host is
 * taken). Entries that are no host are skipped.
 */
export function parseHostList(entries: readonly string[]): HostEntry[] {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i;
  const hosts: HostEntry[] = [];
  for (const entry of entries) {
    const text = entry.trim();
    if (text === "") continue;
    // A bare IPv6 address (two colons, no brackets) gets the brackets a URL needs.
    const address = !scheme.test(text) && /^[^[\]/]*:[^[\]/]*:/.test(text) ? `[${text}]` : text;
    const written = scheme.test(address) ? address : `http://${address}`;
    let url: URL;
    try {
      url = new URL(written);
    } catch {
      continue;
    }
    const authority = written.replace(scheme, "").split(/[/?#]/)[0] ?? "";
    hosts.push({
      hostname: bare(url.hostname),
      port: /:\d+$/.test(authority) ? (url.port || DEFAULT_PORTS[url.protocol]) : undefined,
    });
  }
  return hosts;
}

/** True when `url`'s host (and port, where the entry names one) is listed. */
export function isListed(url: URL, hosts: readonly HostEntry[]): boolean {
  const hostname = bare(url.hostname);
  const port = url.port || DEFAULT_PORTS[url.protocol];
  return hosts.some((entry) => entry.hostname === hostname && (entry.port === undefined || entry.port === port));
}

/** The IPv4 address as four numbers, or null. */
function ipv4(hostname: string): number[] | null {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(hostname);
  if (match === null) return null;
  const parts = match.slice(1).map(Number);
  return parts.every((part) => part <= 255) ? parts : null;
}

/** The IPv6 address (`[...]` as URLs write it) as eight 16-bit groups, or null. */
function ipv6(hostname: string): number[] | null {
  if (!hostname.startsWith("[") || !hostname.endsWith("]")) return null;
  let text = hostname.slice(1, -1).replace(/%.*$/, "");
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two groups.
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail?.[1] !== undefined) {
    const v4 = ipv4(tail[1]);
    if (v4 === null) return null;
    const [a = 0, b = 0, c = 0, d = 0] = v4;
    text = text.slice(0, -tail[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (part: string | undefined): number[] => (part === undefined || part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)));
  const head = groups(halves[0]);
  const rest = groups(halves[1]);
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...head, ...Array<number>(halves.length === 1 ? 0 : missing).fill(0), ...rest];
  return all.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? all : null;
}

/** What an IPv4 address is, when it is not a public unicast address. */
function kindOfIpv4([a = 0, b = 0, c = 0, d = 0]: number[]): string | null {
  if (a === 169 && b === 254 && c === 169 && d === 254) return "the cloud metadata address";
  if (a === 0) return "an unspecified (0.0.0.0/8) address";
  if (a === 127) return "a loopback address";
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return "a private address";
  if (a === 169 && b === 254) return "a link-local address";
  if (a === 100 && b >= 64 && b <= 127) return "a shared (carrier-grade NAT) address";
  if ((a === 192 && b === 0 && c === 0) || (a === 198 && (b === 18 || b === 19))) return "a reserved address";
  if (a >= 224) return "a multicast or reserved address";
  return null;
}

/** What an IPv6 address is, when it is not a public unicast address. */
function kindOfIpv6(groups: number[]): string | null {
  const [g0 = 0, g1 = 0, , , , g5 = 0, g6 = 0, g7 = 0] = groups;
  const zeroUpTo = (n: number) => groups.slice(0, n).every((g) => g === 0);
  const embedded = [g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff];
  if (zeroUpTo(8)) return "the unspecified address";
  if (zeroUpTo(7) && g7 === 1) return "a loopback address";
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) carry an IPv4 address.
  if ((zeroUpTo(5) && (g5 === 0xffff || g5 === 0)) || (g0 === 0x64 && g1 === 0xff9b && groups.slice(2, 6).every((g) => g === 0))) {
    const kind = kindOfIpv4(embedded);
    if (kind !== null) return kind;
  }
  if ((g0 & 0xfe00) === 0xfc00) return "a unique local (private) address";
  if ((g0 & 0xffc0) === 0xfe80) return "a link-local address";
  if ((g0 & 0xffc0) === 0xfec0) return "a site-local address";
  if ((g0 & 0xff00) === 0xff00) return "a multicast address";
  return null;
}

/**
 * What the host is when it is local, private, link-local, metadata or otherwise not public
 * (e.g. "a loopback address"), or null for a public address or a DNS name.
 */
export function kindOfHost(hostname: string): string | null {
  const host = bare(hostname);
  if (host === "localhost" || host.endsWith(".localhost")) return "a loopback name";
  const v4 = ipv4(host);
  if (v4 !== null) return kindOfIpv4(v4);
  const v6 = ipv6(host);
  if (v6 !== null) return kindOfIpv6(v6);
  return null;
}

/**
 * Throws a 400 unless `url` may be fetched: `http:`/`https:`, no credentials, and a listed
 * host. `field` names the URL in the message (`imageUrl`, or the redirect that led to it).
 */
export function checkImageUrl(url: URL, hosts: readonly HostEntry[], field = "imageUrl"): void {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw ServiceError.validation(`${field} must be an http(s) or data: URL`, { field });
  }
  if (url.username !== "" || url.password !== "") {
    throw ServiceError.validation(`${field} must not carry credentials`, { field });
  }
  if (isListed(url, hosts)) return;
  const kind = kindOfHost(url.hostname);
  const host = url.host;
  throw ServiceError.validation(
    kind === null
      ? `${field} refused: the host ${host} is not in PDF_IMAGE_HOSTS`
      : `${field} refused: ${host} is ${kind} and is not in PDF_IMAGE_HOSTS`,
    { field, host },
  );
}
