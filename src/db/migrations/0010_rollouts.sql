CREATE TABLE `rollouts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`slug` text NOT NULL,
	`service` text NOT NULL,
	`old_ids` text NOT NULL,
	`new_ids` text DEFAULT '[]' NOT NULL,
	`phase` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `rollouts_slug_service` ON `rollouts` (`slug`,`service`);--> statement-breakpoint
ALTER TABLE `deploys` ADD `strategies_json` text;