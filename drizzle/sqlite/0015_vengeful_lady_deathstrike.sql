DROP INDEX `checkpoints_session_created`;--> statement-breakpoint
CREATE INDEX `checkpoints_session_weighed_created` ON `checkpoints` (`session_id`,`created_at`,`seq`) WHERE weighed = 1;--> statement-breakpoint
DROP INDEX `entries_branch_created`;--> statement-breakpoint
DROP INDEX `events_session_created`;--> statement-breakpoint
ALTER TABLE `sessions` ADD `times_ordered` integer DEFAULT false NOT NULL;