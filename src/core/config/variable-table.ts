/**
 * @module
 * The table of variables in docs/configuration.md, generated from the sections: each variable's name, who
 * reads it, its kind of value and default (from its schema unless its metadata says better),
 * and its meaning (its schema's description).
 */
import * as z from "zod";
import { CONFIG_SECTIONS } from "./service-config.ts";
import type { VariableMeta } from "./variables.ts";

/** One variable as the table shows it. */
export interface VariableRow {
  /** The environment variable. */
  name: string;
  /** The workers or commands that read it. */
  usedBy: string;
  /** The kind of value. */
  value: string;
  /** The default. */
  fallback: string;
  /** What it means. */
  meaning: string;
}

type JsonSchema = {
  type?: string;
  enum?: unknown[];
  format?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  maxLength?: number;
};

const code = (value: unknown): string => `\`${String(value)}\``;

/** The kind of value a schema accepts, in words. */
function valueOf(schema: JsonSchema): string {
  if (schema.enum !== undefined) {
    const names = schema.enum.map(code);
    return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(", ")} or ${names.at(-1)}`;
  }
  if (schema.type === "integer") {
    const bounded = schema.maximum !== undefined && schema.maximum < Number.MAX_SAFE_INTEGER;
    if (schema.exclusiveMinimum === 0 || schema.minimum === 1) return bounded ? `positive integer up to ${schema.maximum}` : "positive integer";
    return `integer ${schema.minimum ?? ""}–${schema.maximum ?? ""}`;
  }
  if (schema.format === "uri") return "URL";
  if (schema.minLength !== undefined || schema.maxLength !== undefined) return `${schema.minLength ?? 0}–${schema.maxLength ?? ""} characters`;
  return "text";
}

/** A variable's default as the table shows it: from its JSON schema, else (a value read through a preprocess, which the schema's input side cannot show) from the zod default itself. */
function fallbackOf(schema: z.ZodType, json: JsonSchema): string {
  const value = json.default ?? (schema instanceof z.ZodDefault ? (schema.def.defaultValue as unknown) : undefined);
  return value === undefined ? "unset" : code(value);
}

/** Every variable of every section, in section order. */
export function variableRows(): VariableRow[] {
  const rows: VariableRow[] = [];
  for (const section of Object.values(CONFIG_SECTIONS)) {
    for (const [name, schema] of Object.entries(section.in.shape)) {
      const meta = (z.globalRegistry.get(schema) ?? {}) as Partial<VariableMeta> & { description?: string };
      const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
      if (meta.usedBy === undefined || meta.description === undefined) throw new Error(`${name}: a variable needs usedBy and a description`);
      rows.push({
        name,
        usedBy: meta.usedBy,
        value: meta.typeText ?? valueOf(json),
        fallback: meta.defaultText ?? fallbackOf(schema, json),
        meaning: meta.description,
      });
    }
  }
  return rows;
}

/** The markdown table of every variable, as docs/configuration.md holds it between its markers. */
export function variableTable(): string {
  // Descriptions link from the repository root ("docs/" and a page); the table sits inside docs/.
  const escape = (cell: string): string => cell.replaceAll("|", "\\|").replaceAll("](docs/", "](");
  const lines = [
    "| variable | used by | value | default | meaning |",
    "| --- | --- | --- | --- | --- |",
    ...variableRows().map((row) => `| ${code(row.name)} | ${row.usedBy} | ${escape(row.value)} | ${escape(row.fallback)} | ${escape(row.meaning)} |`),
  ];
  return lines.join("\n");
}
