-- Moves to the session's move stack: each history row points at the one below it, the session at its newest standing
-- row and its undone rows (the oldest undone last: the next to redo), read from undone_at before its index goes.
ALTER TABLE `move_history` ADD `prev` text;--> statement-breakpoint
ALTER TABLE `branches` ADD `move_kind` text;--> statement-breakpoint
ALTER TABLE `branches` ADD `move_from_branch_id` text;--> statement-breakpoint
ALTER TABLE `branches` ADD `move_from_position` integer;--> statement-breakpoint
ALTER TABLE `branches` ADD `move_to_position` integer;--> statement-breakpoint
ALTER TABLE `branches` ADD `move_prev` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `move_top` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `move_redo` text;--> statement-breakpoint
UPDATE `move_history` SET `prev` = (SELECT 'm:' || p.`seq` FROM `move_history` p WHERE p.`session_id` = `move_history`.`session_id` AND p.`seq` < `move_history`.`seq` ORDER BY p.`seq` DESC LIMIT 1);--> statement-breakpoint
UPDATE `sessions` SET `move_top` = (SELECT 'm:' || `seq` FROM `move_history` WHERE `session_id` = `sessions`.`id` AND `undone_at` IS NULL ORDER BY `seq` DESC LIMIT 1), `move_redo` = (SELECT json_group_array('m:' || `seq`) FROM (SELECT `seq` FROM `move_history` WHERE `session_id` = `sessions`.`id` AND `undone_at` IS NOT NULL ORDER BY `seq` DESC)) WHERE `id` IN (SELECT `session_id` FROM `move_history`);--> statement-breakpoint
UPDATE `sessions` SET `move_redo` = NULL WHERE `move_redo` = '[]';--> statement-breakpoint
DROP INDEX `move_history_undone`;