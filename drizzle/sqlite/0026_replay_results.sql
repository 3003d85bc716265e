CREATE TABLE `replay_results` (
	`entry_id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`result` text,
	`replayed_at` integer NOT NULL,
	FOREIGN KEY (`entry_id`) REFERENCES `entries`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `replay_results_session` ON `replay_results` (`session_id`);