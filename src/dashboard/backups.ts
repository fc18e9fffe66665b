/**
 * The Backups tab's pure side: a cron expression said in words, durations, short digests, a target in one line, and
 * the config form's state turned into the body the server takes (the write-only secret kept when left blank).
 */
import type { BackupConfig, BackupRun, BackupStrategy, BackupTarget } from "../shared/backups";

/** The mask the server sends for a stored secret, and takes back to mean "keep it". */
export const BACKUP_SECRET_MASK = "********";

/** Poll every this often while a run or a restore is running, and this often otherwise. */
export const BACKUPS_BUSY_POLL_MS = 1500;
export const BACKUPS_IDLE_POLL_MS = 10_000;

/** The body of POST /api/apps/{slug}/backups/configs and PUT /api/backups/configs/{id}. */
export type BackupConfigInput = Pick<
  BackupConfig,
  | "strategy"
  | "service"
  | "target"
  | "schedule"
  | "timezone"
  | "retention_count"
  | "retention_days"
  | "pre_hooks"
  | "post_hooks"
  | "enabled"
>;

/** What the config dialog edits, as typed (numbers and hooks as text). */
export interface ConfigForm {
  strategy: BackupStrategy;
  service: string;
  kind: "local" | "s3";
  endpoint: string;
  bucket: string;
  prefix: string;
  region: string;
  access_key: string;
  /** Blank keeps the stored one when editing. */
  secret_key: string;
  path_style: boolean;
  schedule: string;
  timezone: string;
  retention_count: string;
  retention_days: string;
  /** One command per line. */
  pre_hooks: string;
  post_hooks: string;
  enabled: boolean;
}

/** The form of a new config (the first detected strategy when there is one), or of `c` to edit it. */
export function configForm(c: BackupConfig | null, first?: { service: string; strategy: BackupStrategy }): ConfigForm {
  const t = c?.target;
  const s3 = t?.kind === "s3" ? t : null;
  return {
    strategy: c?.strategy ?? first?.strategy ?? "volume",
    service: c?.service ?? first?.service ?? "",
    kind: t?.kind ?? "local",
    endpoint: s3?.endpoint ?? "",
    bucket: s3?.bucket ?? "",
    prefix: s3?.prefix ?? "",
    region: s3?.region ?? "",
    access_key: s3?.access_key ?? "",
    secret_key: "",
    path_style: s3?.path_style ?? true,
    schedule: c?.schedule ?? "0 3 * * *",
    timezone: c?.timezone ?? "",
    retention_count: c?.retention_count == null ? "7" : String(c.retention_count),
    retention_days: c?.retention_days == null ? "" : String(c.retention_days),
    pre_hooks: (c?.pre_hooks ?? []).join("\n"),
    post_hooks: (c?.post_hooks ?? []).join("\n"),
    enabled: c?.enabled ?? true,
  };
}

const lines = (text: string) =>
  text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);

/** A whole number of at least 1, or null when blank; anything else is an error message. */
function count(text: string, what: string): number | null {
  const t = text.trim();
  if (!t) return null;
  if (!/^\d+$/.test(t) || Number(t) < 1) throw new Error(`${what} must be a whole number of at least 1, or blank`);
  return Number(t);
}

/**
 * The request body of the form; `stored` is the edited config (its secret is kept when the field is left blank).
 * Throws an Error with a message to show when a field cannot be sent as typed.
 */
export function configInput(f: ConfigForm, stored: BackupConfig | null): BackupConfigInput {
  let target: BackupTarget = { kind: "local" };
  if (f.kind === "s3") {
    const hadSecret = stored?.target.kind === "s3" && stored.target.secret_key !== "";
    target = {
      kind: "s3",
      endpoint: f.endpoint.trim(),
      bucket: f.bucket.trim(),
      prefix: f.prefix.trim(),
      region: f.region.trim(),
      access_key: f.access_key.trim(),
      // blank keeps the stored secret: the mask says so to the server
      secret_key: f.secret_key !== "" ? f.secret_key : hadSecret ? BACKUP_SECRET_MASK : "",
      path_style: f.path_style,
    };
  }
  return {
    strategy: f.strategy,
    service: f.service.trim(),
    target,
    schedule: f.schedule.trim() || null,
    timezone: f.timezone.trim() || null,
    retention_count: count(f.retention_count, "Keep the last"),
    retention_days: count(f.retention_days, "Keep for days"),
    pre_hooks: lines(f.pre_hooks),
    post_hooks: lines(f.post_hooks),
    enabled: f.enabled,
  };
}

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const pad = (n: number) => String(n).padStart(2, "0");
const num = (s: string, max: number) => (/^\d+$/.test(s) && Number(s) <= max ? Number(s) : null);

/**
 * A cron expression in words for the common shapes ("every day at 03:00", "every 15 minutes"); other valid-looking
 * expressions get a generic line, and an empty one means "only when asked". The server's cron parser is the judge.
 */
export function cronHint(expr: string | null | undefined): string {
  const e = (expr ?? "").trim();
  if (!e) return "No schedule: runs only when started by hand";
  const f = e.split(/\s+/);
  if (f.length !== 5 && f.length !== 6) return "Five fields: minute hour day-of-month month day-of-week";
  // a six-field expression starts with seconds; the words describe the other five
  const [min, hour, dom, mon, dow] = f.length === 6 ? f.slice(1) : f;
  const m = num(min, 59);
  const h = num(hour, 23);
  const step = /^\*\/(\d+)$/.exec(min);
  if (min === "*" && hour === "*" && dom === "*" && mon === "*" && dow === "*") return "Every minute";
  if (step && hour === "*" && dom === "*" && mon === "*" && dow === "*") return `Every ${step[1]} minutes`;
  if (m !== null && hour === "*" && dom === "*" && mon === "*" && dow === "*") return `Every hour at :${pad(m)}`;
  const hstep = /^\*\/(\d+)$/.exec(hour);
  if (m !== null && hstep && dom === "*" && mon === "*" && dow === "*") return `Every ${hstep[1]} hours at :${pad(m)}`;
  if (m !== null && h !== null && mon === "*") {
    const at = `${pad(h)}:${pad(m)}`;
    if (dom === "*" && dow === "*") return `Every day at ${at}`;
    const d = num(dow, 7);
    if (dom === "*" && d !== null) return `Every ${DAYS[d % 7]} at ${at}`;
    if (dom === "*" && dow === "1-5") return `Every weekday at ${at}`;
    const dm = num(dom, 31);
    if (dm !== null && dm >= 1 && dow === "*") return `On day ${dm} of every month at ${at}`;
  }
  return `Custom schedule (${f.length === 6 ? "second " : ""}minute hour day-of-month month day-of-week)`;
}

/** How long a run took ("12.3 s", "4 min 5 s"), or how long it has run so far; "" without a start. */
export function runDuration(r: Pick<BackupRun, "started_at" | "finished_at">, now = Date.now()): string {
  const start = Date.parse(r.started_at);
  const end = r.finished_at ? Date.parse(r.finished_at) : now;
  const ms = end - start;
  if (!Number.isFinite(ms) || ms < 0) return "";
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** The first 12 hex digits of a digest (the full one goes in a title). */
export const shortSha = (sha: string | null | undefined) => (sha ? sha.slice(0, 12) : "");

/** A target in one line: "local disk", "s3 bucket/prefix at host". */
export function targetSummary(t: BackupTarget): string {
  if (t.kind === "local") return "local disk";
  let host = t.endpoint;
  try {
    host = new URL(t.endpoint).host;
  } catch {
    // shown as typed
  }
  const where = [t.bucket, t.prefix.replace(/^\/+|\/+$/g, "")].filter(Boolean).join("/");
  return `S3 ${where}${host ? ` at ${host}` : ""}`;
}

/** Whether anything in the lists is still running (the tab then polls fast). */
export const anyRunning = (items: ReadonlyArray<{ status: string }> | undefined) => !!items?.some((i) => i.status === "running");
