// The validator shape the spec accepts wherever a plugin hands the host a schema (driver
// options, contributed routes); a file of its own so driver.ts and routes.ts need not import
// each other.

/**
 * A validator in the Standard Schema v1 shape (zod 4, valibot and arktype schemas are one), so
 * the spec stays dependency-free while plugins use the validator they like.
 * @public
 */
export interface OptionsSchemaV1<T> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => OptionsValidationResultV1<T> | Promise<OptionsValidationResultV1<T>>;
  };
}

/** What an {@link OptionsSchemaV1} returns. @public */
export type OptionsValidationResultV1<T> =
  | { readonly value: T; readonly issues?: undefined }
  | {
      readonly issues: readonly {
        readonly message: string;
        readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[];
      }[];
    };
