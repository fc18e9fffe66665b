CREATE TABLE `apps` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`slug` text NOT NULL,
	`stopped` integer DEFAULT false NOT NULL,
	`scale_json` text DEFAULT '{}' NOT NULL,
	`current_version_id` integer,
	`attempted_version_id` integer,
	`last_deploy_status` text,
	`last_error` text,
	`removed_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `apps_slug_unique` ON `apps` (`slug`);--> statement-breakpoint
CREATE TABLE `compose_versions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`app_id` integer NOT NULL,
	`version` integer NOT NULL,
	`hash` text NOT NULL,
	`compose` text NOT NULL,
	`env_sealed` text NOT NULL,
	`source` text NOT NULL,
	`created_by` text NOT NULL,
	`status` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `compose_versions_app_hash` ON `compose_versions` (`app_id`,`hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `compose_versions_app_version` ON `compose_versions` (`app_id`,`version`);--> statement-breakpoint
CREATE TABLE `deploys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`app_id` integer NOT NULL,
	`version_id` integer,
	`action` text NOT NULL,
	`status` text NOT NULL,
	`error` text,
	`source` text NOT NULL,
	`started_at` text NOT NULL,
	`finished_at` text,
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `deploys_app` ON `deploys` (`app_id`);--> statement-breakpoint
CREATE INDEX `deploys_status` ON `deploys` (`status`);--> statement-breakpoint
CREATE TABLE `registries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`url` text NOT NULL,
	`username` text NOT NULL,
	`password_sealed` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `registries_name_unique` ON `registries` (`name`);