/** The answer of a webhook test in one line: ok or failed, the receiver's status, the error. */
import type { WebhookTestResult } from "../../types";

/** "Test delivered: status 200" / "Test failed: status 500 · error". */
export function testWords(r: WebhookTestResult): string {
  const status = r.status > 0 ? `status ${r.status}` : "no response";
  return `${r.ok ? "Test delivered" : "Test failed"}: ${status}${r.error ? ` · ${r.error}` : ""}`;
}

/** The line, announced when it appears. */
export function TestResult({ result }: { result: WebhookTestResult }) {
  return (
    <p class={`notice ${result.ok ? "ok" : "bad"}`} role="status">
      {testWords(result)}
    </p>
  );
}
