// The answers of the bare servers: each scenario's path answers the body the service
// answers to it, so both sides of a ratio write the same bytes. Read from the file the
// bench writes (BENCH_BODIES), shared by the Node, Bun, Deno and workerd ceilings.
export function loadBodies(json) {
  const table = JSON.parse(json);
  return Object.fromEntries(
    Object.entries(table).map(([path, { type, base64 }]) => [path, { type, bytes: Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)) }]),
  );
}

/** The scenario a request path belongs to: the first path segment after the leading slash. */
export function scenarioOf(pathname) {
  const end = pathname.indexOf("/", 1);
  return end === -1 ? pathname.slice(1) : pathname.slice(1, end);
}
