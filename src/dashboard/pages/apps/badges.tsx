/** Status badges of apps, deploys and versions. */
import { humanize } from "../../format";
import type { AppStatus } from "../../types";

/** The live status of an app. */
export function StatusBadge({ status }: { status: AppStatus | string }) {
  return (
    <span class={`badge status status-${status}`} data-status={status}>
      <span class="sr-only">status: </span>
      {humanize(status)}
    </span>
  );
}

/** The result of a deploy or action (running, succeeded, failed, cancelled, interrupted). */
export function ResultBadge({ status }: { status: string }) {
  return <span class={`badge result result-${status}`}>{humanize(status)}</span>;
}
