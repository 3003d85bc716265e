CREATE TABLE `applied` (
	`entry_id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`result` text,
	`applied_seq` integer NOT NULL,
	`applied_at` integer NOT NULL,
	FOREIGN KEY (`entry_id`) REFERENCES `entries`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `applied_session_seq` ON `applied` (`session_id`,`applied_seq`);--> statement-breakpoint
CREATE TABLE `branches` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`session_id` text NOT NULL,
	`parent_id` text,
	`fork_checkpoint_id` text,
	`fork_position` integer NOT NULL,
	`fork_entry_id` text,
	`name` text,
	`reason` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `branches_id` ON `branches` (`id`);--> statement-breakpoint
CREATE INDEX `branches_session` ON `branches` (`session_id`);--> statement-breakpoint
CREATE TABLE `checkpoints` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`session_id` text NOT NULL,
	`branch_id` text NOT NULL,
	`position` integer NOT NULL,
	`name` text,
	`auto` integer NOT NULL,
	`metadata` text,
	`user_id` text NOT NULL,
	`state_id` integer,
	`head_hash` text NOT NULL,
	`checksum` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`branch_id`) REFERENCES `branches`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `checkpoints_id` ON `checkpoints` (`id`);--> statement-breakpoint
CREATE INDEX `checkpoints_user_seq` ON `checkpoints` (`user_id`,`seq`);--> statement-breakpoint
CREATE INDEX `checkpoints_user_session_seq` ON `checkpoints` (`user_id`,`session_id`,`seq`);--> statement-breakpoint
CREATE INDEX `checkpoints_expires` ON `checkpoints` (`expires_at`) WHERE expires_at IS NOT NULL;--> statement-breakpoint
CREATE TABLE `entries` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`branch_id` text NOT NULL,
	`position` integer NOT NULL,
	`kind` text NOT NULL,
	`role` text,
	`content` text,
	`tool` text,
	`call_id` text,
	`client_id` text,
	`metadata` text,
	`state_id` integer,
	`msg_count` integer NOT NULL,
	`hash` blob NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`branch_id`) REFERENCES `branches`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `entries_id` ON `entries` (`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `entries_branch_position` ON `entries` (`branch_id`,`position`);--> statement-breakpoint
CREATE INDEX `entries_branch_tools` ON `entries` (`branch_id`,`position`) WHERE kind = 'tool';--> statement-breakpoint
CREATE TABLE `events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`session_id` text NOT NULL,
	`kind` text NOT NULL,
	`ref_id` text NOT NULL,
	`branch_id` text NOT NULL,
	`detail` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `events_session_seq` ON `events` (`session_id`,`seq`);--> statement-breakpoint
CREATE TABLE `move_steps` (
	`move_id` text NOT NULL,
	`idx` integer NOT NULL,
	`op` text NOT NULL,
	`entry_id` text NOT NULL,
	`status` text NOT NULL,
	`result` text,
	`error` text,
	PRIMARY KEY(`move_id`, `idx`)
);
--> statement-breakpoint
CREATE TABLE `moves` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`session_id` text NOT NULL,
	`kind` text NOT NULL,
	`spec` text NOT NULL,
	`status` text NOT NULL,
	`pid` integer NOT NULL,
	`created_at` integer NOT NULL,
	`finished_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `moves_id` ON `moves` (`id`);--> statement-breakpoint
CREATE INDEX `moves_status` ON `moves` (`status`);--> statement-breakpoint
CREATE INDEX `moves_session` ON `moves` (`session_id`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`user_id` text NOT NULL,
	`title` text,
	`metadata` text,
	`current_branch_id` text NOT NULL,
	`origin_session_id` text,
	`origin_checkpoint_id` text,
	`has_tools` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_id` ON `sessions` (`id`);--> statement-breakpoint
CREATE INDEX `sessions_user_seq` ON `sessions` (`user_id`,`seq`);--> statement-breakpoint
CREATE TABLE `state_snapshots` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`hash` text NOT NULL,
	`body` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `state_snapshots_hash` ON `state_snapshots` (`hash`);--> statement-breakpoint
CREATE TABLE `tool_results` (
	`entry_id` text PRIMARY KEY NOT NULL,
	`status` text NOT NULL,
	`result` text,
	`error` text,
	`hash` text NOT NULL,
	`completed_at` integer NOT NULL,
	FOREIGN KEY (`entry_id`) REFERENCES `entries`(`id`) ON UPDATE no action ON DELETE no action
);
