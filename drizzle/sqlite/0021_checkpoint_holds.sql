CREATE TABLE `checkpoint_holds` (
	`checkpoint_id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`until` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `checkpoint_holds_session` ON `checkpoint_holds` (`session_id`);