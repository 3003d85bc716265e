DROP INDEX `checkpoints_user_session_seq`;--> statement-breakpoint
DROP INDEX `checkpoints_session`;--> statement-breakpoint
CREATE INDEX `checkpoints_session_user_seq` ON `checkpoints` (`session_id`,`user_id`,`seq`);