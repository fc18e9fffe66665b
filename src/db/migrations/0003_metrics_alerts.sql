CREATE TABLE `alert_history` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`rule_id` integer,
	`app_slug` text,
	`kind` text NOT NULL,
	`subject` text,
	`state` text NOT NULL,
	`value` real,
	`message` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `alert_history_app` ON `alert_history` (`app_slug`);--> statement-breakpoint
CREATE INDEX `alert_history_rule` ON `alert_history` (`rule_id`);--> statement-breakpoint
CREATE TABLE `alert_rules` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`app_slug` text,
	`kind` text NOT NULL,
	`threshold` real NOT NULL,
	`duration` text NOT NULL,
	`webhook_ids` text NOT NULL,
	`enabled` integer NOT NULL,
	`repeat_interval` text,
	`silenced_until` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `alert_rules_app` ON `alert_rules` (`app_slug`);--> statement-breakpoint
CREATE TABLE `alert_state` (
	`rule_id` integer NOT NULL,
	`subject` text NOT NULL,
	`state` text NOT NULL,
	`since` text NOT NULL,
	`value` real,
	`last_notified_at` text,
	PRIMARY KEY(`rule_id`, `subject`),
	FOREIGN KEY (`rule_id`) REFERENCES `alert_rules`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`webhook_id` integer NOT NULL,
	`event` text NOT NULL,
	`status` integer,
	`duration_ms` integer NOT NULL,
	`attempts` integer NOT NULL,
	`error` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`webhook_id`) REFERENCES `webhooks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_webhook` ON `webhook_deliveries` (`webhook_id`);--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`url` text NOT NULL,
	`kind` text NOT NULL,
	`secret_enc` text,
	`enabled` integer NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `container_metrics` (
	`tier` text NOT NULL,
	`bucket` integer NOT NULL,
	`container_id` text NOT NULL,
	`app_slug` text NOT NULL,
	`service` text NOT NULL,
	`samples` integer NOT NULL,
	`cpu_pct` real,
	`cpu_pct_max` real,
	`cpu_limit_pct` real,
	`mem_bytes` integer,
	`mem_bytes_max` integer,
	`mem_limit_bytes` integer,
	`net_rx_bps` real,
	`net_rx_bps_max` real,
	`net_tx_bps` real,
	`net_tx_bps_max` real,
	`blk_read_bps` real,
	`blk_read_bps_max` real,
	`blk_write_bps` real,
	`blk_write_bps_max` real,
	`restarts` integer,
	PRIMARY KEY(`tier`, `container_id`, `bucket`)
);
--> statement-breakpoint
CREATE INDEX `container_metrics_app` ON `container_metrics` (`app_slug`,`tier`,`bucket`);--> statement-breakpoint
CREATE INDEX `container_metrics_bucket` ON `container_metrics` (`tier`,`bucket`);--> statement-breakpoint
CREATE TABLE `host_metrics` (
	`tier` text NOT NULL,
	`bucket` integer NOT NULL,
	`samples` integer NOT NULL,
	`cpu_pct` real,
	`cpu_pct_max` real,
	`load1` real,
	`load5` real,
	`load15` real,
	`mem_used_bytes` integer,
	`mem_used_bytes_max` integer,
	`mem_total_bytes` integer,
	`swap_used_bytes` integer,
	`swap_total_bytes` integer,
	`disk_free_bytes` integer,
	`disk_total_bytes` integer,
	`docker_disk_free_bytes` integer,
	`docker_disk_total_bytes` integer,
	`net_rx_bps` real,
	`net_rx_bps_max` real,
	`net_tx_bps` real,
	`net_tx_bps_max` real,
	PRIMARY KEY(`tier`, `bucket`)
);
