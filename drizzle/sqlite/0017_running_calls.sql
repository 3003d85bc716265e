CREATE TABLE `running_calls` (
	`entry_id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`pid` integer NOT NULL,
	`pid_start` text,
	FOREIGN KEY (`entry_id`) REFERENCES `entries`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `running_calls_session` ON `running_calls` (`session_id`);