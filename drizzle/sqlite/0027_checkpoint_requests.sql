ALTER TABLE `checkpoints` ADD `request_id` text;--> statement-breakpoint
ALTER TABLE `checkpoints` ADD `request_fingerprint` text;--> statement-breakpoint
ALTER TABLE `checkpoints` ADD `request_answer` text;--> statement-breakpoint
CREATE UNIQUE INDEX `checkpoints_request` ON `checkpoints` (`session_id`,`request_id`) WHERE request_id IS NOT NULL;