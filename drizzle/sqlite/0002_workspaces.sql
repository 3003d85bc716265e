CREATE TABLE `checkpoint_files` (
	`checkpoint_id` text PRIMARY KEY NOT NULL,
	`manifest_id` integer NOT NULL,
	`dir` text NOT NULL,
	`exclude` text NOT NULL,
	FOREIGN KEY (`checkpoint_id`) REFERENCES `checkpoints`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `file_blobs` (
	`hash` text PRIMARY KEY NOT NULL,
	`content` blob NOT NULL
);
--> statement-breakpoint
CREATE TABLE `file_manifests` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`hash` text NOT NULL,
	`body` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `file_manifests_hash` ON `file_manifests` (`hash`);--> statement-breakpoint
CREATE TABLE `workspaces` (
	`session_id` text PRIMARY KEY NOT NULL,
	`dir` text NOT NULL,
	`exclude` text NOT NULL,
	`manifest_id` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
ALTER TABLE `sessions` ADD `has_workspace` integer DEFAULT false NOT NULL;