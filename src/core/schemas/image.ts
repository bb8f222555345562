/**
 * @module
 * Image records of the image worker (docs/api.md#image-worker), and what a self-hosted image keeps.
 */
import * as z from "zod";

/** One entry of `errors` in an image worker answer (docs/api.md#upload). */
export const ImageApiErrorSchema = z.object({
  code: z.number(),
  message: z.string(),
}).meta({ id: "ImageApiError" });
export type ImageApiError = z.infer<typeof ImageApiErrorSchema>;

/** `result` of an upload answer (docs/api.md#upload): the stored image. */
export const ImageUploadResultSchema = z.object({
  id: z.string(),
  filename: z.string(),
  uploaded: z.string(),
  requireSignedURLs: z.boolean(),
  variants: z.array(z.string()),
}).meta({ id: "UploadedImage" });
export type ImageUploadResult = z.infer<typeof ImageUploadResultSchema>;

/** ImageUploadResponse of docs/api.md#upload, the answer of POST / of the image worker (docs/api.md#image-worker). */
export const ImageUploadResponseSchema = z.object({
  success: z.boolean(),
  result: ImageUploadResultSchema,
  errors: z.array(ImageApiErrorSchema),
  messages: z.array(z.string()),
}).meta({ id: "ImageUploaded" });
export type ImageUploadResponse = z.infer<typeof ImageUploadResponseSchema>;

/** FileUploadResponse of docs/api.md#upload: the same schema as {@link ImageUploadResponseSchema}. */
export const FileUploadResponseSchema = ImageUploadResponseSchema;
export type FileUploadResponse = ImageUploadResponse;

/** Answer of DELETE /{imageId} of the image worker (docs/api.md#image-worker); `result` is always `{}`. */
export const ImageDeleteResponseSchema = z.object({
  success: z.boolean(),
  result: z.object({}),
  errors: z.array(ImageApiErrorSchema),
  messages: z.array(z.string()),
}).meta({ id: "ImageDeleted" });
export type ImageDeleteResponse = z.infer<typeof ImageDeleteResponseSchema>;

/** What a self-hosted image keeps beside its bytes (image worker of docs/api.md#image-worker without an external image service). */
export const ImageMetadataSchema = z.looseObject({
  id: z.string().min(1),
  contentType: z.string().min(1),
  size: z.int().min(0),
  filename: z.string(),
  uploaded: z.iso.datetime({ offset: true }),
  owner: z.string().optional(),
  /** Pixels across, from the image's header (absent on images stored before it was recorded). */
  width: z.int().min(1).optional(),
  /** Pixels down, from the image's header. */
  height: z.int().min(1).optional(),
});
export type ImageMetadata = z.infer<typeof ImageMetadataSchema>;
