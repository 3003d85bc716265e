CREATE TABLE `file_packs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`codec` text NOT NULL,
	`content` blob NOT NULL
);
--> statement-breakpoint
CREATE TABLE `file_trees` (
	`hash` text PRIMARY KEY NOT NULL,
	`body` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `workspace_stats` (
	`session_id` text NOT NULL,
	`dir` text NOT NULL,
	`body` blob NOT NULL,
	PRIMARY KEY(`session_id`, `dir`),
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
ALTER TABLE `checkpoint_files` ADD `gitignore` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `file_blobs` ADD `pack_id` integer;--> statement-breakpoint
ALTER TABLE `file_blobs` ADD `pack_offset` integer;--> statement-breakpoint
ALTER TABLE `file_blobs` ADD `size` integer;--> statement-breakpoint
ALTER TABLE `file_manifests` ADD `root` text;--> statement-breakpoint
ALTER TABLE `workspaces` ADD `gitignore` integer DEFAULT false NOT NULL;