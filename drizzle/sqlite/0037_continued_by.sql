ALTER TABLE `branches` ADD `continued_by` text;--> statement-breakpoint
ALTER TABLE `branches` ADD `continued_at` integer;