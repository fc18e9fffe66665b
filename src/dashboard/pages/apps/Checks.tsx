/** What the Validate button found in the browser, and the server's refusal of a deploy, shown next to the editor. */
import type { Problem } from "./validate";

/** Why a deploy is also the server-side validation (there is no validate-only route). */
export const SERVER_CHECK_NOTE =
  "The server checks the compose safety rules (privileged, host namespaces, devices, bind mounts outside the app…) when you deploy. A refused deploy is answered with the reason and writes nothing.";

/** The result of the browser check: nothing before the first check, problems, or an all-clear. */
export function ComposeChecks({ problems }: { problems: Problem[] | null }) {
  if (problems === null) return null;
  if (problems.length === 0) {
    return (
      <p class="notice ok" role="status">
        No problems found in the browser (YAML syntax and shape). {SERVER_CHECK_NOTE}
      </p>
    );
  }
  return (
    <div class="error-text" role="alert">
      <p class="problems-title">The compose file has problems:</p>
      <ul class="problems" aria-label="Compose problems">
        {problems.map((p, i) => (
          <li key={i}>
            {p.line !== undefined && <strong>Line {p.line}: </strong>}
            {p.message}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The server refused the deploy: its reason as sent, and what that means. */
export function Refusal({ reason }: { reason: string | null }) {
  if (!reason) return null;
  return (
    <div class="error-text refusal" role="alert">
      <p class="refusal-reason">{reason}</p>
      <p class="small">Nothing was written or started.</p>
    </div>
  );
}
