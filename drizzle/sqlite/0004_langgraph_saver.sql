CREATE TABLE `lg_blobs` (
	`session_id` text NOT NULL,
	`channel` text NOT NULL,
	`version` text NOT NULL,
	`type` text NOT NULL,
	`value` blob NOT NULL,
	PRIMARY KEY(`session_id`, `channel`, `version`)
);
--> statement-breakpoint
CREATE TABLE `lg_checkpoints` (
	`session_id` text NOT NULL,
	`checkpoint_id` text NOT NULL,
	`parent_checkpoint_id` text,
	`fp_checkpoint_id` text NOT NULL,
	`type` text NOT NULL,
	`checkpoint` blob NOT NULL,
	`metadata_type` text NOT NULL,
	`metadata` blob NOT NULL,
	`messages_version` text,
	PRIMARY KEY(`session_id`, `checkpoint_id`),
	FOREIGN KEY (`fp_checkpoint_id`) REFERENCES `checkpoints`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `lg_threads` (
	`user_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`checkpoint_ns` text NOT NULL,
	`session_id` text NOT NULL,
	`start_checkpoint_id` text NOT NULL,
	PRIMARY KEY(`user_id`, `thread_id`, `checkpoint_ns`),
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `lg_threads_session` ON `lg_threads` (`session_id`);--> statement-breakpoint
CREATE TABLE `lg_writes` (
	`session_id` text NOT NULL,
	`checkpoint_id` text NOT NULL,
	`task_id` text NOT NULL,
	`idx` integer NOT NULL,
	`channel` text NOT NULL,
	`type` text NOT NULL,
	`value` blob NOT NULL,
	`task_path` text DEFAULT '' NOT NULL,
	PRIMARY KEY(`session_id`, `checkpoint_id`, `task_id`, `idx`)
);
