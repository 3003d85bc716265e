DROP INDEX `checkpoints_session_name_seq`;--> statement-breakpoint
ALTER TABLE `checkpoints` ADD `weighed` integer DEFAULT false NOT NULL;--> statement-breakpoint
UPDATE `checkpoints` SET `weighed` = 1 WHERE `session_id` IN (SELECT `id` FROM `sessions` WHERE `retention` IS NOT NULL);--> statement-breakpoint
CREATE INDEX `checkpoints_session_name_seq` ON `checkpoints` (`session_id`,`name`,`seq`) WHERE weighed = 1;