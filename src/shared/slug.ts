/** The app slug rule (CONTRACT): lowercase letters and digits in dash-separated groups, at most 63 characters. */
export const SLUG_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
export const SLUG_MAX = 63;

/** Whether `v` is a valid app slug. */
export const isSlug = (v: unknown): v is string => typeof v === "string" && v.length <= SLUG_MAX && SLUG_PATTERN.test(v);
