import { parseConfig, type ServiceConfig } from "../../../src/core/config/mod.ts";
import type { ReportOptions } from "../../../src/core/pdf/report.ts";
import type { ReportInput } from "../../../src/core/pdf/report-request.ts";
import { KEYS } from "../../helpers/service.ts";
import { dataUrl, solidPng } from "./images.ts";

export const ALL_LAYERS = ["number", "class", "index", "id", "box", "notes"] as const;

export const SERVICE_NAME = "Test Lab Report Service";

/** Options of renderReport for tests: no host allowed, a small cap. */
export const OPTIONS: ReportOptions = { imageHosts: [], timeoutMs: 5_000, maxImageBytes: 4 * 1024 * 1024, serviceName: SERVICE_NAME };

/** A grey 64x48 PNG as a data: URL. */
export const GREY_PNG = dataUrl(solidPng(64, 48, [128, 128, 128]));

type Annotations = NonNullable<ReportInput["annotationData"]>;

/** Every element of REPORT.md switched on, with distinctive texts. */
export function fullRequest(annotations: Partial<Annotations> = {}, rest: Partial<ReportInput> = {}): ReportInput {
  return {
    imageUrl: GREY_PNG,
    caseNumber: "CASE-2026-0042",
    annotationData: {
      leftCase: "LC-11",
      leftItem: "LI-12",
      rightCase: "RC-21",
      rightItem: "RI-22",
      caseFontColor: "#FFDE21",
      classType: "Bullet",
      classNote: "nine mm Luger",
      indexType: "number",
      indexNumber: "IDX-7",
      supportLevel: "ID",
      hasSubclass: true,
      includeConfirmation: true,
      additionalNotes: "Striations agree over the marked lands.",
      boxAnnotations: [{ id: "b1", x: 10, y: 20, width: 30, height: 40, color: "#ff0000" }],
      ...annotations,
    },
    activeAnnotations: [...ALL_LAYERS],
    currentDate: "11/22/2026",
    notesUpdatedFormatted: "11/21/2026",
    userCompany: "State Crime Laboratory",
    ...rest,
  };
}

/** A service configuration with the test keys and `env` on top. */
export function testConfig(env: Record<string, string> = {}): ServiceConfig {
  return parseConfig({ ...KEYS, ...env });
}
