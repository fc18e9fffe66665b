/** The app slug rule (CONTRACT): lowercase letters and digits in dash-separated groups, at most 63 characters. */
import { badRequest } from "../../lib/errors";
import { isSlug, SLUG_RULE } from "../../shared/slug";

/** Validate an app slug, naming `field` in the 400. */
export function checkSlug(v: unknown, field = "app_slug"): string {
  if (!isSlug(v)) {
    throw badRequest(`${field} must be a slug: ${SLUG_RULE}`);
  }
  return v;
}
