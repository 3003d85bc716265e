CREATE INDEX `checkpoints_branch` ON `checkpoints` (`branch_id`);--> statement-breakpoint
CREATE INDEX `checkpoints_session` ON `checkpoints` (`session_id`);--> statement-breakpoint
CREATE INDEX `lg_checkpoints_fp_checkpoint` ON `lg_checkpoints` (`fp_checkpoint_id`);