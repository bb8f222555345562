/**
 * @module
 * The one model of boxes and annotations (docs/storage.md, docs/exchange.md): annotations of
 * an image, the colour and percentage values they use, and the reviewer's confirmation
 * attached to them. The stored documents, the exchange formats and the PDF request all use
 * these schemas, and their types are inferred from them; the PDF request's schemas
 * (`pdf.ts`) are derived from these. The confirmation lives here, not in exchange.ts, so
 * that case.ts need not import exchange.ts (which imports it).
 *
 * Each schema carries its zod type explicitly: JSR refuses inferred types in a published API
 * ("slow types"), and the types below are part of it. tsc checks each annotation against its
 * schema, so the two cannot drift.
 */
import * as z from "zod";

/** The class of the compared items. */
export const ClassTypeSchema: z.ZodEnum<{ Bullet: "Bullet"; "Cartridge Case": "Cartridge Case"; Other: "Other" }> = z.enum([
  "Bullet",
  "Cartridge Case",
  "Other",
]);
/** The class of the compared items: Bullet, Cartridge Case or Other. */
export type ClassType = Infer<"ClassType">;

/** Whether the index is a number or a colour. */
export const IndexTypeSchema: z.ZodEnum<{ number: "number"; color: "color" }> = z.enum(["number", "color"]);
/** Whether the index is a number or a colour. */
export type IndexType = Infer<"IndexType">;

/** The examiner's conclusion. */
export const SupportLevelSchema: z.ZodEnum<{ ID: "ID"; Exclusion: "Exclusion"; Inconclusive: "Inconclusive" }> = z.enum([
  "ID",
  "Exclusion",
  "Inconclusive",
]);
/** The examiner's conclusion: ID, Exclusion or Inconclusive. */
export type SupportLevel = Infer<"SupportLevel">;

/** A hex colour code `#rgb` or `#rrggbb`, any letter case (a box's colour). */
export const HexColorSchema: z.ZodString = z
  .string()
  .regex(/^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i, "expected a hex colour #rgb or #rrggbb");
export type HexColor = z.infer<typeof HexColorSchema>;

/** The CSS named colours (lower case) and their `#rrggbb` values, for the report's colours (docs/report.md#colours). */
export const CSS_NAMED_COLORS: Readonly<Record<string, string>> = Object.freeze({
  aliceblue: "#f0f8ff", antiquewhite: "#faebd7", aqua: "#00ffff", aquamarine: "#7fffd4",
  azure: "#f0ffff", beige: "#f5f5dc", bisque: "#ffe4c4", black: "#000000",
  blanchedalmond: "#ffebcd", blue: "#0000ff", blueviolet: "#8a2be2", brown: "#a52a2a",
  burlywood: "#deb887", cadetblue: "#5f9ea0", chartreuse: "#7fff00", chocolate: "#d2691e",
  coral: "#ff7f50", cornflowerblue: "#6495ed", cornsilk: "#fff8dc", crimson: "#dc143c",
  cyan: "#00ffff", darkblue: "#00008b", darkcyan: "#008b8b", darkgoldenrod: "#b8860b",
  darkgray: "#a9a9a9", darkgreen: "#006400", darkgrey: "#a9a9a9", darkkhaki: "#bdb76b",
  darkmagenta: "#8b008b", darkolivegreen: "#556b2f", darkorange: "#ff8c00", darkorchid: "#9932cc",
  darkred: "#8b0000", darksalmon: "#e9967a", darkseagreen: "#8fbc8f", darkslateblue: "#483d8b",
  darkslategray: "#2f4f4f", darkslategrey: "#2f4f4f", darkturquoise: "#00ced1", darkviolet: "#9400d3",
  deeppink: "#ff1493", deepskyblue: "#00bfff", dimgray: "#696969", dimgrey: "#696969",
  dodgerblue: "#1e90ff", firebrick: "#b22222", floralwhite: "#fffaf0", forestgreen: "#228b22",
  fuchsia: "#ff00ff", gainsboro: "#dcdcdc", ghostwhite: "#f8f8ff", gold: "#ffd700",
  goldenrod: "#daa520", gray: "#808080", green: "#008000", greenyellow: "#adff2f",
  grey: "#808080", honeydew: "#f0fff0", hotpink: "#ff69b4", indianred: "#cd5c5c",
  indigo: "#4b0082", ivory: "#fffff0", khaki: "#f0e68c", lavender: "#e6e6fa",
  lavenderblush: "#fff0f5", lawngreen: "#7cfc00", lemonchiffon: "#fffacd", lightblue: "#add8e6",
  lightcoral: "#f08080", lightcyan: "#e0ffff", lightgoldenrodyellow: "#fafad2", lightgray: "#d3d3d3",
  lightgreen: "#90ee90", lightgrey: "#d3d3d3", lightpink: "#ffb6c1", lightsalmon: "#ffa07a",
  lightseagreen: "#20b2aa", lightskyblue: "#87cefa", lightslategray: "#778899", lightslategrey: "#778899",
  lightsteelblue: "#b0c4de", lightyellow: "#ffffe0", lime: "#00ff00", limegreen: "#32cd32",
  linen: "#faf0e6", magenta: "#ff00ff", maroon: "#800000", mediumaquamarine: "#66cdaa",
  mediumblue: "#0000cd", mediumorchid: "#ba55d3", mediumpurple: "#9370db", mediumseagreen: "#3cb371",
  mediumslateblue: "#7b68ee", mediumspringgreen: "#00fa9a", mediumturquoise: "#48d1cc",
  mediumvioletred: "#c71585", midnightblue: "#191970", mintcream: "#f5fffa", mistyrose: "#ffe4e1",
  moccasin: "#ffe4b5", navajowhite: "#ffdead", navy: "#000080", oldlace: "#fdf5e6",
  olive: "#808000", olivedrab: "#6b8e23", orange: "#ffa500", orangered: "#ff4500",
  orchid: "#da70d6", palegoldenrod: "#eee8aa", palegreen: "#98fb98", paleturquoise: "#afeeee",
  palevioletred: "#db7093", papayawhip: "#ffefd5", peachpuff: "#ffdab9", peru: "#cd853f",
  pink: "#ffc0cb", plum: "#dda0dd", powderblue: "#b0e0e6", purple: "#800080",
  rebeccapurple: "#663399", red: "#ff0000", rosybrown: "#bc8f8f", royalblue: "#4169e1",
  saddlebrown: "#8b4513", salmon: "#fa8072", sandybrown: "#f4a460", seagreen: "#2e8b57",
  seashell: "#fff5ee", sienna: "#a0522d", silver: "#c0c0c0", skyblue: "#87ceeb",
  slateblue: "#6a5acd", slategray: "#708090", slategrey: "#708090", snow: "#fffafa",
  springgreen: "#00ff7f", steelblue: "#4682b4", tan: "#d2b48c", teal: "#008080",
  thistle: "#d8bfd8", tomato: "#ff6347", turquoise: "#40e0d0", violet: "#ee82ee",
  wheat: "#f5deb3", white: "#ffffff", whitesmoke: "#f5f5f5", yellow: "#ffff00",
  yellowgreen: "#9acd32",
});

/** A colour as the report accepts it (docs/report.md#colours): `#rgb`, `#rrggbb` or a CSS colour name (any case). */
export const ColorSchema: z.ZodUnion<readonly [z.ZodString, z.ZodString]> = z.union(
  [HexColorSchema, z.string().refine((name) => Object.hasOwn(CSS_NAMED_COLORS, name.toLowerCase()))],
  { error: "expected a colour: #rgb, #rrggbb or a CSS colour name" },
);
export type Color = z.infer<typeof ColorSchema>;

/** A percentage 0 to 100 inclusive, finite (box coordinates). */
export const PercentSchema: z.ZodNumber = z.number().min(0).max(100);
export type Percent = z.infer<typeof PercentSchema>;

/**
 * A box in percent of the image, with its colour; unknown fields are kept. The spec names a hex
 * colour; a CSS colour name, which the report draws too, is taken as well, so a case the service
 * stored and exported always imports.
 */
export const BoxAnnotationSchema: z.ZodObject<{
  id: z.ZodString;
  x: typeof PercentSchema;
  y: typeof PercentSchema;
  width: typeof PercentSchema;
  height: typeof PercentSchema;
  color: typeof ColorSchema;
  label: z.ZodOptional<z.ZodString>;
  timestamp: z.ZodString;
}, z.core.$loose> = z.looseObject({
  id: z.string(),
  x: PercentSchema,
  y: PercentSchema,
  width: PercentSchema,
  height: PercentSchema,
  color: ColorSchema,
  label: z.string().optional(),
  timestamp: z.string(),
}).meta({ id: "BoxAnnotation" });
/** A box in percent of the image (`x`, `y`, `width`, `height`, 0–100), its colour (hex, or a CSS colour name), an optional label, its creation time; fields written by other clients are kept. */
export type BoxAnnotation = Infer<"BoxAnnotation">;

/** A confirmation id as new confirmations get it: "CONF-" and 10 characters A-Z0-9 (docs/exchange.md#confirmations). */
export const ConfirmationIdSchema: z.ZodString = z.string().regex(/^CONF-[A-Z0-9]{10}$/, "expected CONF- and 10 characters A-Z0-9");
export type ConfirmationId = z.infer<typeof ConfirmationIdSchema>;

/**
 * A reviewer's confirmation of one image (docs/exchange.md#confirmations), as stored in
 * `AnnotationData.confirmationData` and `CaseData.confirmations`; unknown fields are kept.
 * `confirmationId` is any string here so that confirmations made by older clients load.
 */
export const ConfirmationSchema: z.ZodObject<{
  fullName: z.ZodString;
  badgeId: z.ZodString;
  timestamp: z.ZodString;
  confirmationId: z.ZodString;
  confirmedBy: z.ZodString;
  confirmedByEmail: z.ZodString;
  confirmedByCompany: z.ZodString;
  confirmedAt: z.ZodString;
}, z.core.$loose> = z.looseObject({
  fullName: z.string(),
  badgeId: z.string(),
  timestamp: z.string(),
  confirmationId: z.string(),
  confirmedBy: z.string(),
  confirmedByEmail: z.string(),
  confirmedByCompany: z.string(),
  confirmedAt: z.string(),
}).meta({ id: "Confirmation" });
/** A reviewer's confirmation of one image: who (name, badge, user id, email, company), when, and its `CONF-` id; fields written by other clients are kept. */
export type Confirmation = Infer<"Confirmation">;

/** The stored annotations of one image (docs/storage.md#case-documents); unknown fields are kept. */
export const AnnotationDataSchema: z.ZodObject<{
  leftCase: z.ZodString;
  rightCase: z.ZodString;
  leftItem: z.ZodString;
  rightItem: z.ZodString;
  caseFontColor: z.ZodOptional<z.ZodString>;
  classType: z.ZodOptional<typeof ClassTypeSchema>;
  customClass: z.ZodOptional<z.ZodString>;
  classNote: z.ZodOptional<z.ZodString>;
  indexType: z.ZodOptional<typeof IndexTypeSchema>;
  indexNumber: z.ZodOptional<z.ZodString>;
  indexColor: z.ZodOptional<z.ZodString>;
  supportLevel: z.ZodOptional<typeof SupportLevelSchema>;
  hasSubclass: z.ZodOptional<z.ZodBoolean>;
  includeConfirmation: z.ZodBoolean;
  confirmationData: z.ZodOptional<typeof ConfirmationSchema>;
  additionalNotes: z.ZodOptional<z.ZodString>;
  boxAnnotations: z.ZodOptional<z.ZodArray<typeof BoxAnnotationSchema>>;
  updatedAt: z.ZodString;
}, z.core.$loose> = z.looseObject({
  leftCase: z.string(),
  rightCase: z.string(),
  leftItem: z.string(),
  rightItem: z.string(),
  caseFontColor: z.string().optional(),
  classType: ClassTypeSchema.optional(),
  customClass: z.string().optional(),
  classNote: z.string().optional(),
  indexType: IndexTypeSchema.optional(),
  indexNumber: z.string().optional(),
  indexColor: z.string().optional(),
  supportLevel: SupportLevelSchema.optional(),
  hasSubclass: z.boolean().optional(),
  includeConfirmation: z.boolean(),
  confirmationData: ConfirmationSchema.optional(),
  additionalNotes: z.string().optional(),
  boxAnnotations: z.array(BoxAnnotationSchema).optional(),
  updatedAt: z.string(),
}).meta({ id: "AnnotationData" });
/** The annotations of one image: case and item labels, class, index, support level, confirmation, notes and boxes; fields written by other clients are kept. */
export type AnnotationData = Infer<"AnnotationData">;

/**
 * The schemas of the model by name, behind a private alias: `deno doc --lint` then documents
 * the inferred types without asking for zod's own types to be public.
 * @ignore
 */
interface Model {
  ClassType: typeof ClassTypeSchema;
  IndexType: typeof IndexTypeSchema;
  SupportLevel: typeof SupportLevelSchema;
  BoxAnnotation: typeof BoxAnnotationSchema;
  Confirmation: typeof ConfirmationSchema;
  AnnotationData: typeof AnnotationDataSchema;
}

/**
 * The type of the model's schema `K`, as parsing yields it.
 * @ignore
 */
type Infer<K extends keyof Model> = z.output<Model[K]>;
