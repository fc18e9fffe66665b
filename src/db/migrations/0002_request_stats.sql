CREATE TABLE `request_stats` (
	`app_slug` text NOT NULL,
	`tier` text NOT NULL,
	`bucket` integer NOT NULL,
	`data` text NOT NULL,
	PRIMARY KEY(`app_slug`, `tier`, `bucket`)
);
