/** Shown for a page the signed-in role may not open, and for unknown paths. */
import { Link } from "../router";

/** 403 in the dashboard: the page exists, but not for this role. */
export function Forbidden({ message = "This page is for the super-admin only." }: { message?: string }) {
  return (
    <section class="card empty-state">
      <h1>Not available</h1>
      <p>{message}</p>
      <Link href="/">Back to the overview</Link>
    </section>
  );
}

/** Unknown dashboard path. */
export function NotFound() {
  return (
    <section class="card empty-state">
      <h1>Page not found</h1>
      <p>There is no dashboard page at this address.</p>
      <Link href="/">Back to the overview</Link>
    </section>
  );
}
