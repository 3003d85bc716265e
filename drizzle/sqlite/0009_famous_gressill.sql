CREATE TABLE `checkpoint_metadata` (
	`cp_user` text NOT NULL,
	`key` text NOT NULL,
	`value` text NOT NULL,
	`cp_seq` integer NOT NULL,
	PRIMARY KEY(`cp_user`, `key`, `value`, `cp_seq`)
);
--> statement-breakpoint
CREATE INDEX `checkpoint_metadata_seq` ON `checkpoint_metadata` (`cp_seq`);--> statement-breakpoint
ALTER TABLE `sessions` ADD `retention` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `retention_aged_at` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `checkpoints_session_name_seq` ON `checkpoints` (`session_id`,`name`,`seq`);--> statement-breakpoint
CREATE INDEX `checkpoints_session_created` ON `checkpoints` (`session_id`,`created_at`,`seq`);--> statement-breakpoint
CREATE INDEX `entries_branch_created` ON `entries` (`branch_id`,`created_at`,`seq`);--> statement-breakpoint
CREATE INDEX `events_session_created` ON `events` (`session_id`,`created_at`,`seq`);