CREATE TABLE `call_paths` (
	`entry_id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`paths` text NOT NULL,
	FOREIGN KEY (`entry_id`) REFERENCES `entries`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `call_paths_session` ON `call_paths` (`session_id`);