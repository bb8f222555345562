/**
 * @module
 * Counters, histograms and gauges in the Prometheus text exposition format 0.0.4
 * (docs/operations.md#metrics). Written here because prom-client needs Node's modules and
 * `process`, and no registry on npm runs on workerd, Deno and Bun alike with zero dependencies.
 */

/** Label values of one series, by label name. */
export type Labels = Readonly<Record<string, string>>;

/** A counter: only goes up. */
export interface Counter {
  inc(labels: Labels, by?: number): void;
}

/** A histogram of observed values (seconds, for durations). */
export interface Histogram {
  observe(labels: Labels, value: number): void;
}

/** The registry `/metrics` prints. */
export interface MetricsRegistry {
  counter(name: string, help: string, labelNames: readonly string[]): Counter;
  histogram(name: string, help: string, labelNames: readonly string[], buckets?: readonly number[]): Histogram;
  /** A value read when printed; `undefined` leaves it out (a runtime that cannot tell). */
  gauge(name: string, help: string, read: () => number | undefined): void;
  /** Every metric in the text exposition format. */
  text(): string;
}

/** Prometheus' default buckets, in seconds. */
export const DURATION_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const escapeLabel = (value: string): string => value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
const escapeHelp = (value: string): string => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");

function labelText(names: readonly string[], values: readonly string[], extra?: string): string {
  const pairs = names.map((name, i) => `${name}="${escapeLabel(values[i] ?? "")}"`);
  if (extra !== undefined) pairs.push(extra);
  return pairs.length === 0 ? "" : `{${pairs.join(",")}}`;
}

const number = (value: number): string => (Number.isFinite(value) ? String(value) : value > 0 ? "+Inf" : value < 0 ? "-Inf" : "NaN");

/** A new, empty registry. */
export function createMetricsRegistry(): MetricsRegistry {
  const printers: (() => string)[] = [];
  const header = (name: string, help: string, type: string) => `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} ${type}\n`;
  return {
    counter(name, help, labelNames) {
      const series = new Map<string, { values: string[]; count: number }>();
      printers.push(() => header(name, help, "counter") + [...series.values()].map((s) => `${name}${labelText(labelNames, s.values)} ${number(s.count)}\n`).join(""));
      return {
        inc(labels, by = 1) {
          const values = labelNames.map((label) => labels[label] ?? "");
          const key = values.join("\u0000");
          const found = series.get(key);
          if (found === undefined) series.set(key, { values, count: by });
          else found.count += by;
        },
      };
    },
    histogram(name, help, labelNames, buckets = DURATION_BUCKETS) {
      const series = new Map<string, { values: string[]; counts: number[]; sum: number; count: number }>();
      printers.push(() =>
        header(name, help, "histogram") + [...series.values()].map((s) => {
          let cumulative = 0;
          const lines = buckets.map((bound, i) => {
            cumulative += s.counts[i]!;
            return `${name}_bucket${labelText(labelNames, s.values, `le="${number(bound)}"`)} ${cumulative}\n`;
          });
          lines.push(`${name}_bucket${labelText(labelNames, s.values, 'le="+Inf"')} ${s.count}\n`);
          lines.push(`${name}_sum${labelText(labelNames, s.values)} ${number(s.sum)}\n`, `${name}_count${labelText(labelNames, s.values)} ${s.count}\n`);
          return lines.join("");
        }).join("")
      );
      return {
        observe(labels, value) {
          const values = labelNames.map((label) => labels[label] ?? "");
          const key = values.join("\u0000");
          let found = series.get(key);
          if (found === undefined) series.set(key, (found = { values, counts: buckets.map(() => 0), sum: 0, count: 0 }));
          const slot = buckets.findIndex((bound) => value <= bound);
          if (slot !== -1) found.counts[slot]!++;
          found.sum += value;
          found.count++;
        },
      };
    },
    gauge(name, help, read) {
      printers.push(() => {
        const value = read();
        return value === undefined ? "" : `${header(name, help, "gauge")}${name} ${number(value)}\n`;
      });
    },
    text() {
      return printers.map((print) => print()).join("");
    },
  };
}
