CREATE TABLE `metric_containers` (
	`container_id` text PRIMARY KEY NOT NULL,
	`app_slug` text NOT NULL,
	`service` text NOT NULL,
	`name` text NOT NULL,
	`last_seen` integer NOT NULL
);
