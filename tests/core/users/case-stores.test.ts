/**
 * The one case store, two implementations: over the service's ports and over the data and
 * image workers' HTTP API. The same cases run against both, on the same stores, so they must
 * answer alike: what account deletion and exchange rely on.
 */
import { describe, expect, it } from "vitest";
import { KEYS, testService } from "../../helpers/service.ts";
import { fixture } from "../../helpers/images.ts";
import { hostForDirectUse, imageHostOf } from "../../../src/core/service/service.ts";
import { caseFileIds, type CaseStore } from "../../../src/core/cases/case-store.ts";
import { portsCaseStore } from "../../../src/core/cases/ports-case-store.ts";
import { httpCaseStore } from "../../../src/core/cases/http-case-store.ts";

function stores() {
  const { app, ports, config } = testService({ PUBLIC_URL: "http://localhost" });
  const calls: string[] = [];
  const viaApp = (input: string | URL | Request, init?: RequestInit) => {
    calls.push(String(input instanceof Request ? input.url : input));
    return Promise.resolve(app.request(input, init));
  };
  const imageHost = hostForDirectUse(imageHostOf(config, ports.clock, () => ports.images), config);
  const implementations: [string, CaseStore][] = [
    ["ports", portsCaseStore({ data: ports.data, images: ports.images, imageHost })],
    ["http", httpCaseStore({
      dataWorkerUrl: "http://localhost/data/",
      dataKey: KEYS.R2_KEY_SECRET,
      imageWorkerUrl: "http://localhost/image",
      imageToken: KEYS.IMAGES_API_TOKEN,
      fetch: viaApp,
    })],
  ];
  return { ports, calls, implementations };
}

const encoder = new TextEncoder();

describe("the case store over the ports and over HTTP", () => {
  for (const name of ["ports", "http"]) {
    describe(name, () => {
      const setup = () => {
        const { ports, calls, implementations } = stores();
        return { ports, calls, store: implementations.find(([n]) => n === name)![1] };
      };

      it("reads, writes, updates and deletes case and annotation documents; missing is null, deleting what is gone is fine", async () => {
        const { store } = setup();
        expect(await store.getCase("u1", "C-1")).toBeNull();
        expect(await store.getAnnotations("u1", "C-1", "f1")).toBeNull();
        await store.putCase("u1", "C-1", { caseNumber: "C-1", files: [{ id: "f1" }] });
        await store.updateCase("u1", "C-1", (current) => ({ ...(current as object), note: "updated" }));
        expect(await store.getCase("u1", "C-1")).toEqual({ caseNumber: "C-1", files: [{ id: "f1" }], note: "updated" });
        await store.putAnnotations("u1", "C-1", "f1", { leftCase: "A" });
        await store.updateAnnotations("u1", "C-1", "f1", (current) => ({ ...(current as object), rightCase: "B" }));
        expect(await store.getAnnotations("u1", "C-1", "f1")).toEqual({ leftCase: "A", rightCase: "B" });
        expect(await caseFileIds(store, "u1", "C-1")).toEqual(["f1"]);
        await store.deleteAnnotations("u1", "C-1", "f1");
        await store.deleteAnnotations("u1", "C-1", "f1");
        expect(await store.getAnnotations("u1", "C-1", "f1")).toBeNull();
        await store.deleteCase("u1", "C-1");
        await store.deleteCase("u1", "C-1");
        expect(await store.getCase("u1", "C-1")).toBeNull();
        expect(await caseFileIds(store, "u1", "C-1")).toBeNull();
      });

      it("uploads, reads and deletes images; an absent image reads as null and deletes fine", async () => {
        const { store } = setup();
        const bytes = new Uint8Array(fixture("sample.png"));
        const id = await store.uploadImage({ bytes, filename: "sample.png", contentType: "image/png", owner: "u1" });
        expect(await store.readImage(id)).toEqual(bytes);
        await store.deleteImage(id);
        await store.deleteImage(id);
        expect(await store.readImage(id)).toBeNull();
      });

      it("checks every key segment the same way, before any call", async () => {
        const { store, calls } = setup();
        for (const attempt of [
          () => store.getCase("u1", "a/b"),
          () => store.getCase("..", "C-1"),
          () => store.putAnnotations("u1", "C-1", "f?1", {}),
          () => store.deleteAnnotations("u1", "C-1", "f\u0000"),
          () => store.deleteImage("a/../b"),
          () => store.readImage(""),
        ]) {
          await expect(attempt()).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
        }
        expect(calls).toEqual([]);
      });

      it("a stored case document that is not JSON is refused when read; account deletion reads it as naming no files", async () => {
        const { ports, store } = setup();
        await ports.data.put("u1/C-1/data.json", encoder.encode("{not json"));
        await expect(store.getCase("u1", "C-1")).rejects.toMatchObject({ code: "SERVER_ERROR", message: expect.stringContaining("not valid JSON") });
        expect(await caseFileIds(store, "u1", "C-1")).toEqual([]);
        // Nested too deeply to be served, yet its files are still found for deletion.
        const deep = `{"files":[{"id":"f1"}],"x":${"[".repeat(70)}${"]".repeat(70)}}`;
        await ports.data.put("u1/C-2/data.json", encoder.encode(deep));
        await expect(store.getCase("u1", "C-2")).rejects.toMatchObject({ code: "SERVER_ERROR" });
        expect(await caseFileIds(store, "u1", "C-2")).toEqual(["f1"]);
      });
    });
  }

  it("only the ports store can list a user's cases and remove a whole case folder", async () => {
    const { ports, implementations } = stores();
    const [[, overPorts], [, overHttp]] = implementations as [[string, CaseStore], [string, CaseStore]];
    await ports.data.put("u1/C-1/data.json", encoder.encode("{}"));
    await ports.data.put("u1/C-1/f1/data.json", encoder.encode("{}"));
    await ports.data.put("u1/C-2/stray.json", encoder.encode("{}"));
    expect((await overPorts.storedCaseNumbers!("u1")).sort()).toEqual(["C-1", "C-2"]);
    await overPorts.deleteCaseFolder!("u1", "C-1");
    expect(await ports.data.list("u1/")).toEqual(["u1/C-2/stray.json"]);
    expect(overHttp.storedCaseNumbers).toBeUndefined();
    expect(overHttp.deleteCaseFolder).toBeUndefined();
  });

  it("over HTTP, a worker refusing the key is FORBIDDEN and an unreachable one a SERVER_ERROR", async () => {
    const { app } = testService();
    const wrongKey = httpCaseStore({
      dataWorkerUrl: "http://localhost/data",
      dataKey: "wrong-key",
      imageWorkerUrl: "http://localhost/image",
      imageToken: KEYS.IMAGES_API_TOKEN,
      fetch: (input, init) => Promise.resolve(app.request(input, init)),
    });
    await expect(wrongKey.getCase("u1", "C-1")).rejects.toMatchObject({ code: "FORBIDDEN", message: "The data worker answered HTTP 403" });
    const unreachable = httpCaseStore({
      dataWorkerUrl: "http://127.0.0.1:9/",
      dataKey: KEYS.R2_KEY_SECRET,
      imageWorkerUrl: "http://127.0.0.1:9/",
      imageToken: KEYS.IMAGES_API_TOKEN,
      timeoutMs: 5_000,
    });
    await expect(unreachable.deleteCase("u1", "C-1")).rejects.toMatchObject({ code: "SERVER_ERROR", message: "The data worker could not be reached" });
  });
});
