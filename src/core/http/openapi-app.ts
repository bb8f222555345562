/**
 * @module
 * `OpenAPIHono` and `createRoute` with the API and behaviour of `@hono/zod-openapi` (same
 * validators in the same order, same registry, same document generator), without importing
 * that module at run time: it extends zod through the whole `zod` namespace object, which
 * makes a bundler keep all of zod (its 40-odd locales, JSON Schema conversion) in every worker.
 * Here zod is extended through `ZodType` alone, which is all the extension touches. The types
 * are `@hono/zod-openapi`'s own, so routes and handlers type-check exactly as with it.
 */
import type { OpenAPIHono as ZodOpenAPIHono, createRoute as zodCreateRoute } from "@hono/zod-openapi";
import { extendZodWithOpenApi, getOpenApiMetadata, OpenAPIRegistry, type RouteConfig } from "@asteasolutions/zod-to-openapi";
import type { OpenApiGeneratorV3, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import { zValidator } from "@hono/zod-validator";
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { mergePath } from "hono/utils/url";
import { ZodType } from "zod";

// `schema.openapi(...)` works as with `@hono/zod-openapi` (a no-op when something extended zod already).
extendZodWithOpenApi({ ZodType } as Parameters<typeof extendZodWithOpenApi>[0]);

type ObjectConfig = ConstructorParameters<typeof OpenApiGeneratorV31>[0] extends unknown ? Parameters<OpenApiGeneratorV31["generateDocument"]>[0] : never;
type GeneratorOptions = ConstructorParameters<typeof OpenApiGeneratorV31>[1];
type Configure<T> = T | ((c: Context) => T);
type ValidationHook = (result: { success: boolean }, c: Context) => unknown;
type Target = "query" | "param" | "header" | "cookie" | "json" | "form";
type Validatable = Parameters<typeof zValidator>[1];
type Route = RouteConfig & { middleware?: MiddlewareHandler | MiddlewareHandler[]; hide?: boolean };
type Definitions = OpenAPIRegistry["definitions"];

/** Makes the generators of OpenAPI 3.0 and 3.1 documents (zod-to-openapi's), set by `loadOpenApiGenerators` (openapi-document.ts). */
export interface DocumentGenerators {
  v3(definitions: Definitions, options?: GeneratorOptions): Pick<OpenApiGeneratorV3, "generateDocument">;
  v31(definitions: Definitions, options?: GeneratorOptions): Pick<OpenApiGeneratorV31, "generateDocument">;
}

// Apart from the routing app: a worker bundled alone serves no document and carries no generator.
let generators: DocumentGenerators | undefined;

/** Sets how every app of this module generates its OpenAPI document. */
export function setDocumentGenerators(chosen: DocumentGenerators): void {
  generators = chosen;
}

function documentGenerators(): DocumentGenerators {
  if (generators === undefined) {
    throw new Error("No OpenAPI document generator is loaded: call loadOpenApiGenerators() first (the ./cloudflare entry exports it; the root entry and createService call it)");
  }
  return generators;
}

const isZod = (schema: unknown): schema is Validatable =>
  typeof schema === "object" && schema !== null && ["parse", "safeParse", "parseAsync", "safeParseAsync"].every((name) => typeof (schema as Record<string, unknown>)[name] === "function");
const isJsonContentType = (type: string) => /^application\/([a-z-.]+\+)?json/i.test(type);
const isFormContentType = (type: string) => /^(multipart\/form-data|application\/x-www-form-urlencoded)/i.test(type);
const JSON_REQUEST = /^application\/([a-z-.]+\+)?json(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i;
const MULTIPART_REQUEST = /^multipart\/form-data(;\s?boundary=[a-zA-Z0-9'"()+_,\-./:=?]+)?$/i;
const URLENCODED_REQUEST = /^application\/x-www-form-urlencoded(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i;
const openApiPath = (path: string) => path.replaceAll(/:([^/]+)/g, "{$1}");

/** A last path parameter of any characters, slashes included: `/{key{[\s\S]+}}`. */
const REST_PARAMETER = /\/{[^{}/]+{\[\\s\\S\]\+}}$/;

/**
 * The path Hono routes a route by (`/{id}` is `/:id`). One difference from `@hono/zod-openapi`:
 * a last parameter of any characters (a key of several segments that the handler reads from
 * the raw path) is routed as `/*` when the route validates no parameters. Hono's RegExpRouter
 * cannot order such a parameter against a static route beside it (`/audit` beside
 * `/{filename{[\s\S]+}}`), so one of them put every request of the app on the trie router,
 * about seven times slower to match a data key. `/*` also matches the mount itself, whose own
 * route the same handler answers.
 */
function routingPath(route: Route): string {
  const path = route.request?.params === undefined ? route.path.replace(REST_PARAMETER, "/*") : route.path;
  return path.replaceAll(/\/{(.+?)}/g, "/:$1");
}

function matchesMediaType(contentType: string, mediaType: string): boolean {
  if (mediaType === "*/*") return true;
  if (isJsonContentType(mediaType)) return JSON_REQUEST.test(contentType);
  if (isFormContentType(mediaType)) return MULTIPART_REQUEST.test(contentType) || URLENCODED_REQUEST.test(contentType);
  const essence = (contentType.split(";")[0] ?? "").trim().toLowerCase();
  if (mediaType.endsWith("/*")) return essence.startsWith(mediaType.slice(0, -1).toLowerCase());
  return essence === mediaType.toLowerCase();
}

/** Whether the request has a body of at least one byte (read from a clone). */
async function hasRequestBody(c: Context): Promise<boolean> {
  const raw = c.req.raw;
  if (raw.body === null) return false;
  if (raw.bodyUsed) return (await c.req.arrayBuffer()).byteLength > 0;
  const body = raw.clone().body;
  if (body === null) return false;
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return false;
      if (value.byteLength > 0) return true;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

/** The document's paths under `basePath`. */
function withBasePath<T extends { paths?: Record<string, unknown> }>(document: T, basePath: string): T {
  const paths: Record<string, unknown> = {};
  for (const [path, item] of Object.entries(document.paths ?? {})) paths[mergePath(openApiPath(basePath), path)] = item;
  return { ...document, paths };
}

/** The members of Hono the class below uses, typed loosely: its generic signatures cannot be overridden as they are. */
interface LooseHono {
  on(method: string[], path: string[], ...handlers: MiddlewareHandler[]): unknown;
  get(path: string, handler: (c: Context) => Response | Promise<Response>): unknown;
  route(path: string, app?: unknown): unknown;
  basePath(path: string): LooseHono;
  _basePath: string;
  router: unknown;
  routes: unknown;
  getPath: unknown;
}
const LooseHono = Hono as unknown as new (init?: ConstructorParameters<typeof Hono>[0]) => LooseHono;

class OpenAPIApp extends LooseHono {
  openAPIRegistry = new OpenAPIRegistry();
  defaultHook: ValidationHook | undefined;
  #parentApp: OpenAPIApp | undefined;

  constructor(init?: ConstructorParameters<typeof Hono>[0] & { defaultHook?: ValidationHook }) {
    super(init);
    this.defaultHook = init?.defaultHook;
  }

  #resolveDefaultHook(): ValidationHook | undefined {
    if (this.defaultHook) return this.defaultHook;
    const seen = new Set<OpenAPIApp>([this]);
    let parent = this.#parentApp;
    while (parent && !seen.has(parent)) {
      if (parent.defaultHook) return parent.defaultHook;
      seen.add(parent);
      parent = parent.#parentApp;
    }
    return undefined;
  }

  openapi = ({ middleware: routeMiddleware, hide, ...route }: Route, handler: MiddlewareHandler, hook?: ValidationHook): this => {
    if (!hide) this.openAPIRegistry.registerPath(route);
    const effectiveHook: ValidationHook = hook ?? ((result, c) => this.#resolveDefaultHook()?.(result, c));
    const validate = (target: Target, schema: Validatable) => zValidator(target, schema, effectiveHook as Parameters<typeof zValidator>[2]) as MiddlewareHandler;
    const validators: MiddlewareHandler[] = [];
    const request = route.request;
    if (request?.query) validators.push(validate("query", request.query as Validatable));
    if (request?.params) validators.push(validate("param", request.params as Validatable));
    if (request?.headers) validators.push(validate("header", request.headers as Validatable));
    if (request?.cookies) validators.push(validate("cookie", request.cookies as Validatable));
    const bodyContent = request?.body?.content as Record<string, { schema?: unknown } | undefined> | undefined;
    if (bodyContent) {
      const declared = Object.keys(bodyContent);
      if (declared.some((type) => isZod(bodyContent[type]?.schema) && (isJsonContentType(type) || isFormContentType(type)))) {
        validators.push(async (c, next) => {
          const contentType = c.req.header("content-type");
          if (contentType) {
            if (!declared.some((type) => matchesMediaType(contentType, type))) throw new HTTPException(415, { message: "Unsupported Media Type" });
          } else if (await hasRequestBody(c)) throw new HTTPException(415, { message: "Unsupported Media Type" });
          await next();
        });
      }
      for (const type of declared) {
        const schema = bodyContent[type]?.schema;
        if (!isZod(schema)) continue;
        for (const [target, matches] of [["json", isJsonContentType], ["form", isFormContentType]] as const) {
          if (!matches(type)) continue;
          const validator = validate(target, schema);
          if (request?.body?.required) validators.push(validator);
          else {
            validators.push(async (c, next) => {
              const contentType = c.req.header("content-type");
              if (contentType && matches(contentType)) return await validator(c, next);
              c.req.addValidatedData(target, {});
              await next();
            });
          }
        }
      }
    }
    const middleware = routeMiddleware ? (Array.isArray(routeMiddleware) ? routeMiddleware : [routeMiddleware]) : [];
    this.on([route.method], [routingPath(route)], ...middleware, ...validators, handler);
    return this;
  };

  openapiRoutes = (inputs: readonly { route: Route; handler: MiddlewareHandler; hook?: ValidationHook; addRoute?: boolean }[]): this => {
    for (const { route, handler, hook, addRoute } of inputs) if (addRoute !== false) this.openapi(route, handler, hook);
    return this;
  };

  getOpenAPIDocument = (objectConfig: ObjectConfig, generatorConfig?: GeneratorOptions) => {
    const document = documentGenerators().v3(this.openAPIRegistry.definitions, generatorConfig).generateDocument(objectConfig);
    return this._basePath ? withBasePath(document, this._basePath) : document;
  };

  getOpenAPI31Document = (objectConfig: ObjectConfig, generatorConfig?: GeneratorOptions) => {
    const document = documentGenerators().v31(this.openAPIRegistry.definitions, generatorConfig).generateDocument(objectConfig);
    return this._basePath ? withBasePath(document, this._basePath) : document;
  };

  doc = (path: string, configureObject: Configure<ObjectConfig>, configureGenerator?: Configure<GeneratorOptions>): this =>
    this.#serveDocument(path, configureObject, configureGenerator, this.getOpenAPIDocument);

  doc31 = (path: string, configureObject: Configure<ObjectConfig>, configureGenerator?: Configure<GeneratorOptions>): this =>
    this.#serveDocument(path, configureObject, configureGenerator, this.getOpenAPI31Document);

  #serveDocument(
    path: string,
    configureObject: Configure<ObjectConfig>,
    configureGenerator: Configure<GeneratorOptions> | undefined,
    generate: (objectConfig: ObjectConfig, generatorConfig?: GeneratorOptions) => object,
  ): this {
    this.get(path, (c) => {
      const objectConfig = typeof configureObject === "function" ? configureObject(c) : configureObject;
      const generatorConfig = typeof configureGenerator === "function" ? configureGenerator(c) : configureGenerator;
      try {
        return c.json(generate(objectConfig, generatorConfig));
      } catch (e) {
        return c.json(e as object, 500);
      }
    });
    return this;
  }

  override route(path: string, app?: unknown): this {
    super.route(path, app);
    if (!(app instanceof OpenAPIApp)) return this;
    app.#parentApp ??= this;
    const prefix = openApiPath(path);
    const base = openApiPath(app._basePath);
    for (const definition of app.openAPIRegistry.definitions) {
      switch (definition.type) {
        case "component":
          this.openAPIRegistry.registerComponent(definition.componentType, definition.name, definition.component);
          break;
        case "route":
          this.openAPIRegistry.registerPath({ ...definition.route, path: mergePath(prefix, base, definition.route.path) });
          break;
        case "webhook":
          this.openAPIRegistry.registerWebhook({ ...definition.webhook, path: mergePath(prefix, base, definition.webhook.path) });
          break;
        case "schema":
          this.openAPIRegistry.register(getOpenApiMetadata(definition.schema)._internal?.refId ?? "", definition.schema);
          break;
        case "parameter":
          this.openAPIRegistry.registerParameter(getOpenApiMetadata(definition.schema)._internal?.refId ?? "", definition.schema);
          break;
      }
    }
    return this;
  }

  override basePath(path: string): this {
    const cloned = super.basePath(path);
    const app = new OpenAPIApp({ defaultHook: this.defaultHook });
    Object.assign(app, { router: cloned.router, routes: cloned.routes, getPath: cloned.getPath, errorHandler: (cloned as unknown as { errorHandler: unknown }).errorHandler, _basePath: cloned._basePath });
    return app as this;
  }
}

/** `OpenAPIHono` of `@hono/zod-openapi`: a Hono app whose `openapi` routes validate with zod and describe themselves in its OpenAPI registry. */
export const OpenAPIHono: typeof ZodOpenAPIHono = OpenAPIApp as unknown as typeof ZodOpenAPIHono;

/** `createRoute` of `@hono/zod-openapi`: a route declaration for `app.openapi`, with its Hono routing path. */
export const createRoute: typeof zodCreateRoute = ((routeConfig: { path: string }) => {
  const getRoutingPath = () => routeConfig.path.replaceAll(/\/{(.+?)}/g, "/:$1");
  return Object.defineProperty({ ...routeConfig, getRoutingPath }, "getRoutingPath", { enumerable: false });
}) as typeof zodCreateRoute;
