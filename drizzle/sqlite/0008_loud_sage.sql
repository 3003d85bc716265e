CREATE TABLE `move_history` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`session_id` text NOT NULL,
	`kind` text NOT NULL,
	`from_branch_id` text NOT NULL,
	`from_position` integer NOT NULL,
	`to_branch_id` text NOT NULL,
	`to_position` integer NOT NULL,
	`undone_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `move_history_session_seq` ON `move_history` (`session_id`,`seq`);