CREATE TABLE `app_subnets` (
	`subnet` text PRIMARY KEY NOT NULL,
	`slug` text NOT NULL,
	`network` text NOT NULL,
	`name` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `app_subnets_slug_network` ON `app_subnets` (`slug`,`network`);