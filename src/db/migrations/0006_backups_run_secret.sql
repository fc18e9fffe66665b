ALTER TABLE `backup_restores` ADD `stopped_containers` text;--> statement-breakpoint
ALTER TABLE `backup_runs` ADD `secret_enc` text;