CREATE TABLE `backup_configs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`app_slug` text,
	`strategy` text NOT NULL,
	`service` text,
	`target_kind` text NOT NULL,
	`target_json` text NOT NULL,
	`secret_enc` text,
	`schedule` text,
	`timezone` text,
	`retention_count` integer,
	`retention_days` integer,
	`pre_hooks` text NOT NULL,
	`post_hooks` text NOT NULL,
	`enabled` integer NOT NULL,
	`last_scheduled_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `backup_configs_app` ON `backup_configs` (`app_slug`);--> statement-breakpoint
CREATE TABLE `backup_restores` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`run_id` integer,
	`app_slug` text NOT NULL,
	`strategy` text NOT NULL,
	`service` text,
	`container` text,
	`status` text NOT NULL,
	`bytes` integer,
	`started_at` text NOT NULL,
	`finished_at` text,
	`error` text
);
--> statement-breakpoint
CREATE INDEX `backup_restores_app` ON `backup_restores` (`app_slug`);--> statement-breakpoint
CREATE TABLE `backup_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`config_id` integer,
	`app_slug` text,
	`strategy` text NOT NULL,
	`service` text,
	`target_kind` text NOT NULL,
	`target_json` text NOT NULL,
	`location` text,
	`status` text NOT NULL,
	`trigger` text NOT NULL,
	`size_bytes` integer,
	`sha256` text,
	`started_at` text NOT NULL,
	`finished_at` text,
	`error` text,
	FOREIGN KEY (`config_id`) REFERENCES `backup_configs`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `backup_runs_app` ON `backup_runs` (`app_slug`);--> statement-breakpoint
CREATE INDEX `backup_runs_config` ON `backup_runs` (`config_id`);