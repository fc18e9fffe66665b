/** The app slug rule (CONTRACT): lowercase letters and digits in dash-separated groups, at most 63 characters. */
export const SLUG_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
export const SLUG_MAX = 63;
/** The rule in words, for messages. */
export const SLUG_RULE = `lowercase letters and digits separated by single dashes, at most ${SLUG_MAX} characters`;

/** Whether `v` is a valid app slug. */
export const isSlug = (v: unknown): v is string => typeof v === "string" && v.length <= SLUG_MAX && SLUG_PATTERN.test(v);
