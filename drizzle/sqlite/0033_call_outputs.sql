ALTER TABLE `call_paths` ADD `outputs` text;--> statement-breakpoint
ALTER TABLE `call_paths` ADD `hand_edited` text;