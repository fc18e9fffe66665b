/** Version and commit, baked in by scripts/build.ts (`--define`); "dev" when running from source. */
declare const SUNDECK_VERSION: string | undefined;
declare const SUNDECK_COMMIT: string | undefined;

export const VERSION: string = typeof SUNDECK_VERSION === "string" ? SUNDECK_VERSION : "0.0.0-dev";
export const COMMIT: string = typeof SUNDECK_COMMIT === "string" ? SUNDECK_COMMIT : "dev";
