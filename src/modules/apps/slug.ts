/** The app slug rule (CONTRACT): lowercase letters and digits in dash-separated groups, at most 63 characters. */
import { badRequest } from "../../lib/errors";

export const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const MAX_SLUG = 63;

/** Whether `v` is a valid slug. */
export const isSlug = (v: unknown): v is string => typeof v === "string" && v.length <= MAX_SLUG && SLUG.test(v);

/** Validate an app slug, naming `field` in the 400. */
export function checkSlug(v: unknown, field = "app_slug"): string {
  if (!isSlug(v)) {
    throw badRequest(
      `${field} must be a slug: lowercase letters and digits separated by single dashes, at most ${MAX_SLUG} characters`,
    );
  }
  return v;
}
