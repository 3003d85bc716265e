CREATE TABLE `imported_calls` (
	`entry_id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	FOREIGN KEY (`entry_id`) REFERENCES `entries`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `imported_calls_session` ON `imported_calls` (`session_id`);--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_checkpoints` (
	`seq` integer PRIMARY KEY NOT NULL,
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
INSERT INTO `__new_checkpoints`("seq", "id", "session_id", "branch_id", "position", "name", "auto", "metadata", "user_id", "state_id", "head_hash", "checksum", "created_at", "expires_at") SELECT "seq", "id", "session_id", "branch_id", "position", "name", "auto", "metadata", "user_id", "state_id", "head_hash", "checksum", "created_at", "expires_at" FROM `checkpoints`;--> statement-breakpoint
DROP TABLE `checkpoints`;--> statement-breakpoint
ALTER TABLE `__new_checkpoints` RENAME TO `checkpoints`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `checkpoints_id` ON `checkpoints` (`id`);--> statement-breakpoint
CREATE INDEX `checkpoints_user_listing` ON `checkpoints` (`user_id`,`seq`,`id`,`session_id`,`branch_id`,`position`,`name`,`auto`,`metadata`,`checksum`,`created_at`,`expires_at`);--> statement-breakpoint
CREATE INDEX `checkpoints_user_session_seq` ON `checkpoints` (`user_id`,`session_id`,`seq`);--> statement-breakpoint
CREATE INDEX `checkpoints_expires` ON `checkpoints` (`expires_at`) WHERE expires_at IS NOT NULL;--> statement-breakpoint
CREATE TABLE `__new_branches` (
	`seq` integer PRIMARY KEY NOT NULL,
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
INSERT INTO `__new_branches`("seq", "id", "session_id", "parent_id", "fork_checkpoint_id", "fork_position", "fork_entry_id", "name", "reason", "created_at") SELECT "seq", "id", "session_id", "parent_id", "fork_checkpoint_id", "fork_position", "fork_entry_id", "name", "reason", "created_at" FROM `branches`;--> statement-breakpoint
DROP TABLE `branches`;--> statement-breakpoint
ALTER TABLE `__new_branches` RENAME TO `branches`;--> statement-breakpoint
CREATE UNIQUE INDEX `branches_id` ON `branches` (`id`);--> statement-breakpoint
CREATE INDEX `branches_session` ON `branches` (`session_id`);--> statement-breakpoint
CREATE TABLE `__new_entries` (
	`seq` integer PRIMARY KEY NOT NULL,
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
INSERT INTO `__new_entries`("seq", "id", "branch_id", "position", "kind", "role", "content", "tool", "call_id", "client_id", "metadata", "state_id", "msg_count", "hash", "created_at") SELECT "seq", "id", "branch_id", "position", "kind", "role", "content", "tool", "call_id", "client_id", "metadata", "state_id", "msg_count", "hash", "created_at" FROM `entries`;--> statement-breakpoint
DROP TABLE `entries`;--> statement-breakpoint
ALTER TABLE `__new_entries` RENAME TO `entries`;--> statement-breakpoint
CREATE UNIQUE INDEX `entries_id` ON `entries` (`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `entries_branch_position` ON `entries` (`branch_id`,`position`);--> statement-breakpoint
CREATE INDEX `entries_branch_tools` ON `entries` (`branch_id`,`position`) WHERE kind = 'tool';--> statement-breakpoint
CREATE TABLE `__new_sessions` (
	`seq` integer PRIMARY KEY NOT NULL,
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
INSERT INTO `__new_sessions`("seq", "id", "user_id", "title", "metadata", "current_branch_id", "origin_session_id", "origin_checkpoint_id", "has_tools", "created_at", "updated_at") SELECT "seq", "id", "user_id", "title", "metadata", "current_branch_id", "origin_session_id", "origin_checkpoint_id", "has_tools", "created_at", "updated_at" FROM `sessions`;--> statement-breakpoint
DROP TABLE `sessions`;--> statement-breakpoint
ALTER TABLE `__new_sessions` RENAME TO `sessions`;--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_id` ON `sessions` (`id`);--> statement-breakpoint
CREATE INDEX `sessions_user_seq` ON `sessions` (`user_id`,`seq`);--> statement-breakpoint
ALTER TABLE `moves` ADD `pid_start` text;