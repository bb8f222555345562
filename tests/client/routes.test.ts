/**
 * Route types flow to hono's `hc` from the package: `hc<ServiceRoutes>` (and each
 * `hc<XWorkerRoutes>`) of the ./client entry gives typed calls and answers, and every answer
 * type written out there is what the worker's own routes answer (the types they infer).
 */
import { hc } from "hono/client";
import type { Hono } from "hono";
import { describe, expect, expectTypeOf, it } from "vitest";
import type {
  AuditEntries,
  AuditWorkerRoutes,
  CaptchaResult,
  DataWorkerRoutes,
  ImageWorkerRoutes,
  KeysWorkerRoutes,
  ServiceRoutes,
  UserData,
  UserWorkerRoutes,
} from "../../src/client/mod.ts";
import type { DataWorkerApp } from "../../src/core/workers/data.ts";
import type { AuditWorkerApp } from "../../src/core/workers/audit.ts";
import type { UserWorkerApp } from "../../src/core/workers/user.ts";
import type { ImageWorkerApp } from "../../src/core/workers/image.ts";
import type { KeysWorkerApp } from "../../src/core/workers/keys.ts";
import type { CaptchaWorkerApp } from "../../src/core/workers/captcha.ts";
import { KEYS, testService } from "../helpers/service.ts";

type SchemaOf<A> = A extends Hono<infer _E, infer S, infer _B> ? S : never;
/** The answer body of a route and method, whatever the statuses. */
type Answer<S, P extends string, M extends string> = P extends keyof S ? M extends keyof S[P] ? S[P][M] extends infer E ? E extends { output: infer O } ? O : never : never : never : never;
/** The answer of a route and method, with the status the worker's own types give it. */
type StatusOf<S, P extends string, M extends string> = P extends keyof S ? M extends keyof S[P] ? S[P][M] extends { status: infer C } ? C : never : never : never;

describe("route types for hc, from the ./client entry", () => {
  it("every written-out answer is what the worker's routes answer: same paths and methods, the inferred answer fits", () => {
    type Data = SchemaOf<DataWorkerApp>;
    type DataOut = SchemaOf<DataWorkerRoutes>;
    expectTypeOf<keyof Data>().toEqualTypeOf<keyof DataOut>();
    expectTypeOf<Answer<Data, "/audit", "$post">>().toExtend<Answer<DataOut, "/audit", "$post">>();
    expectTypeOf<Answer<Data, "/audit", "$get">>().toExtend<Answer<DataOut, "/audit", "$get">>();
    expectTypeOf<Answer<Data, "/:filename{[\\s\\S]+}", "$get">>().toEqualTypeOf<Answer<DataOut, "/:filename{[\\s\\S]+}", "$get">>();
    expectTypeOf<Answer<Data, "/:filename{[\\s\\S]+}", "$put">>().toEqualTypeOf<Answer<DataOut, "/:filename{[\\s\\S]+}", "$put">>();
    expectTypeOf<Answer<Data, "/:filename{[\\s\\S]+}", "$delete">>().toEqualTypeOf<Answer<DataOut, "/:filename{[\\s\\S]+}", "$delete">>();

    type Audit = SchemaOf<AuditWorkerApp>;
    type AuditOut = SchemaOf<AuditWorkerRoutes>;
    expectTypeOf<keyof Audit>().toEqualTypeOf<keyof AuditOut>();
    expectTypeOf<Answer<Audit, "/audit", "$get">>().toExtend<AuditEntries>();

    type User = SchemaOf<UserWorkerApp>;
    type UserOut = SchemaOf<UserWorkerRoutes>;
    expectTypeOf<keyof User>().toEqualTypeOf<keyof UserOut>();
    expectTypeOf<Answer<User, "/", "$get">>().toExtend<Answer<UserOut, "/", "$get">>();
    expectTypeOf<Answer<User, "/:userUid", "$get">>().toExtend<Answer<UserOut, "/:userUid", "$get">>();
    expectTypeOf<Answer<User, "/:userUid", "$put">>().toExtend<Answer<UserOut, "/:userUid", "$put">>();
    expectTypeOf<Answer<User, "/:userUid", "$delete">>().toExtend<Answer<UserOut, "/:userUid", "$delete">>();
    expectTypeOf<Answer<User, "/:userUid/cases", "$put">>().toExtend<Answer<UserOut, "/:userUid/cases", "$put">>();
    expectTypeOf<Answer<User, "/:userUid/cases", "$delete">>().toExtend<Answer<UserOut, "/:userUid/cases", "$delete">>();
    expectTypeOf<StatusOf<User, "/:userUid", "$put">>().toEqualTypeOf<200 | 201>();

    type Image = SchemaOf<ImageWorkerApp>;
    type ImageOut = SchemaOf<ImageWorkerRoutes>;
    expectTypeOf<keyof Image>().toEqualTypeOf<keyof ImageOut>();
    expectTypeOf<Answer<Image, "/", "$post">>().toExtend<Answer<ImageOut, "/", "$post">>();
    expectTypeOf<Answer<Image, "/:imageDeliveryUrl{[\\s\\S]+}", "$get">>().toEqualTypeOf<Answer<ImageOut, "/:imageDeliveryUrl{[\\s\\S]+}", "$get">>();
    expectTypeOf<Answer<Image, "/:imageId", "$delete">>().toExtend<Answer<ImageOut, "/:imageId", "$delete">>();

    type Keys = SchemaOf<KeysWorkerApp>;
    expectTypeOf<keyof Keys>().toEqualTypeOf<keyof SchemaOf<KeysWorkerRoutes>>();
    expectTypeOf<Answer<Keys, "/:keyName", "$get">>().toEqualTypeOf<string>();
    expectTypeOf<Answer<SchemaOf<CaptchaWorkerApp>, "/", "$post">>().toExtend<CaptchaResult>();
  });

  it("hc<ServiceRoutes> gives typed calls and answers, and they work against the service", async () => {
    const { app } = testService();
    const fetchApp = (input: RequestInfo | URL, init?: RequestInit) => Promise.resolve(app.request(input instanceof Request ? input : String(input), init));
    const api = hc<ServiceRoutes>("http://service.test", { fetch: fetchApp });
    type UserAnswer = Awaited<ReturnType<Awaited<ReturnType<typeof api.user[":userUid"]["$get"]>>["json"]>>;
    expectTypeOf<UserAnswer>().toHaveProperty("uid").toEqualTypeOf<string>();
    expectTypeOf<UserAnswer>().toExtend<UserData>();
    expectTypeOf(api.user[":userUid"].$get).parameter(0).toEqualTypeOf<{ param: { userUid: string } }>();
    type Appended = Awaited<ReturnType<Awaited<ReturnType<typeof api.audit.audit.$post>>["json"]>>;
    expectTypeOf<Appended>().toHaveProperty("entryCount").toEqualTypeOf<number>();
    type Read = Awaited<ReturnType<Awaited<ReturnType<typeof api.data.audit.$get>>["json"]>>;
    expectTypeOf<Read>().toHaveProperty("total").toEqualTypeOf<number>();

    const userKey = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH };
    const body = { email: "a@lab.example", firstName: "A", lastName: "B", company: "Lab", permitted: true };
    const created = await api.user[":userUid"].$put({ param: { userUid: "u1" }, json: body }, { headers: userKey });
    expect(created.status).toBe(201);
    const user = await (await api.user[":userUid"].$get({ param: { userUid: "u1" } }, { headers: userKey })).json();
    expect(user.uid).toBe("u1");
    const dataKey = { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET };
    const entry = { timestamp: "2026-11-22T12:00:00.000Z", userId: "u1", userEmail: "", action: "case-create" as const, result: "success" as const, details: {} };
    const appended = await (await api.audit.audit.$post({ query: { userId: "u1" }, json: entry }, { headers: dataKey })).json();
    expect(appended.entryCount).toBe(1);
    expect((await (await api.data.audit.$get({ query: { userId: "u1" } }, { headers: dataKey })).json()).total).toBe(1);
    const keys = hc<KeysWorkerRoutes>("http://service.test/keys", { fetch: fetchApp });
    const key = await keys[":keyName"].$get({ param: { keyName: "USER_DB_AUTH" } }, { headers: { "X-Custom-Auth-Key": KEYS.KEYS_AUTH } });
    expect(key.status).toBe(200);
    expect(await key.text()).toBe(KEYS.USER_DB_AUTH);
  });
});
