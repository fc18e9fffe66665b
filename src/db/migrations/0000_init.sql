CREATE TABLE `activity` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`app_slug` text,
	`app_id` integer,
	`actor_user_id` integer,
	`actor_name` text NOT NULL,
	`actor_source` text NOT NULL,
	`ip` text,
	`category` text NOT NULL,
	`action` text NOT NULL,
	`target` text,
	`summary` text NOT NULL,
	`error` text,
	`compose_version_id` integer,
	`sync_status` text,
	`sync_commit_sha` text,
	`sync_error` text,
	`before_json` text,
	`after_json` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `activity_app` ON `activity` (`app_slug`);--> statement-breakpoint
CREATE INDEX `activity_category` ON `activity` (`category`);--> statement-breakpoint
CREATE INDEX `activity_app_category` ON `activity` (`app_slug`,`category`);--> statement-breakpoint
CREATE INDEX `activity_actor_category` ON `activity` (`actor_user_id`,`category`);--> statement-breakpoint
CREATE INDEX `activity_created` ON `activity` (`created_at`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`name` text NOT NULL,
	`key_hash` text NOT NULL,
	`prefix` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text,
	`last_used_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_key_hash_unique` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_user` ON `api_keys` (`user_id`);--> statement-breakpoint
CREATE TABLE `app_access` (
	`user_id` integer NOT NULL,
	`app_slug` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`user_id`, `app_slug`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `app_access_slug` ON `app_access` (`app_slug`);--> statement-breakpoint
CREATE TABLE `login_failures` (
	`username` text NOT NULL,
	`ip` text NOT NULL,
	`failures` integer NOT NULL,
	`locked_until` integer DEFAULT 0 NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`username`, `ip`)
);
--> statement-breakpoint
CREATE TABLE `users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`username` text NOT NULL,
	`password_hash` text NOT NULL,
	`role` text NOT NULL,
	`token_version` integer DEFAULT 1 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_username_lower` ON `users` (lower("username"));--> statement-breakpoint
CREATE TABLE `settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` text NOT NULL
);
