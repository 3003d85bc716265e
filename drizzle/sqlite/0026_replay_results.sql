CREATE TABLE `replay_results` (
	`entry_id` text NOT NULL,
	`session_id` text NOT NULL,
	`applied_seq` integer NOT NULL,
	`result` text,
	`replayed_at` integer NOT NULL,
	PRIMARY KEY(`entry_id`, `applied_seq`),
	FOREIGN KEY (`entry_id`) REFERENCES `entries`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `replay_results_session` ON `replay_results` (`session_id`);--> statement-breakpoint
-- Replays a database journaled before this table: kept here too (the application each was unnamed: 0), so prune's
-- deleting their moves loses none.
INSERT INTO `replay_results` (`entry_id`, `session_id`, `applied_seq`, `result`, `replayed_at`)
SELECT `entry_id`, `session_id`, 0, `result`, `replayed_at` FROM (
  SELECT s.`entry_id`, m.`session_id`, s.`result`, coalesce(m.`finished_at`, m.`created_at`) AS `replayed_at`,
    row_number() OVER (PARTITION BY s.`entry_id` ORDER BY m.`seq` DESC, s.`idx` DESC) AS `newest`
  FROM `move_steps` s JOIN `moves` m ON m.`id` = s.`move_id`
  WHERE s.`op` = 'replay' AND s.`status` = 'done' AND s.`entry_id` IN (SELECT `id` FROM `entries`)
) WHERE `newest` = 1;
