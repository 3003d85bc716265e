PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_set_aside` (
	`entry_id` text NOT NULL,
	`session_id` text NOT NULL,
	`branch_id` text DEFAULT '' NOT NULL,
	`position` integer,
	`set_at` integer NOT NULL,
	PRIMARY KEY(`entry_id`, `branch_id`),
	FOREIGN KEY (`entry_id`) REFERENCES `entries`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `__new_set_aside`("entry_id", "session_id", "branch_id", "position", "set_at") SELECT "entry_id", "session_id", coalesce("branch_id", ''), "position", "set_at" FROM `set_aside`;--> statement-breakpoint
DROP TABLE `set_aside`;--> statement-breakpoint
ALTER TABLE `__new_set_aside` RENAME TO `set_aside`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `set_aside_session` ON `set_aside` (`session_id`);