/**
 * Migrations embedded in the binary: each drizzle-kit SQL file imported as text, in journal order.
 * After `bunx drizzle-kit generate`, add the new file here (test/unit/db checks the list matches the journal).
 */
import m0000 from "./0000_init.sql" with { type: "text" };
import m0001 from "./0001_apps.sql" with { type: "text" };
import m0002 from "./0002_request_stats.sql" with { type: "text" };
import m0003 from "./0003_metrics_alerts.sql" with { type: "text" };
import m0004 from "./0004_metric_containers.sql" with { type: "text" };
import m0005 from "./0005_backups.sql" with { type: "text" };
import m0006 from "./0006_backups_run_secret.sql" with { type: "text" };
import m0007 from "./0007_version_routing.sql" with { type: "text" };
import m0008 from "./0008_app_subnets.sql" with { type: "text" };
import m0009 from "./0009_app_template.sql" with { type: "text" };
import m0010 from "./0010_rollouts.sql" with { type: "text" };
import m0011 from "./0011_version_services.sql" with { type: "text" };

export interface Migration {
  tag: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  { tag: "0000_init", sql: m0000 },
  { tag: "0001_apps", sql: m0001 },
  { tag: "0002_request_stats", sql: m0002 },
  { tag: "0003_metrics_alerts", sql: m0003 },
  { tag: "0004_metric_containers", sql: m0004 },
  { tag: "0005_backups", sql: m0005 },
  { tag: "0006_backups_run_secret", sql: m0006 },
  { tag: "0007_version_routing", sql: m0007 },
  { tag: "0008_app_subnets", sql: m0008 },
  { tag: "0009_app_template", sql: m0009 },
  { tag: "0010_rollouts", sql: m0010 },
  { tag: "0011_version_services", sql: m0011 },
];
