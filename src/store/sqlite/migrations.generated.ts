// Generated from drizzle/ by scripts/generate-migrations.ts (npm run db:generate runs it): do not edit.

/** One migration of drizzle/: its statements, the SHA-256 of its file, and its journal time (its order). */
export interface EmbeddedMigration {
  readonly tag: string;
  readonly folderMillis: number;
  readonly hash: string;
  readonly sql: readonly string[];
}

export const MIGRATIONS: readonly EmbeddedMigration[] = [
  {
    "tag": "0000_init",
    "folderMillis": 1795357587556,
    "hash": "54714fd191ae71460388229cfc533e219e69354e464a16e21011aead04b2bb61",
    "sql": [
      "CREATE TABLE `applied` (\n\t`entry_id` text PRIMARY KEY NOT NULL,\n\t`session_id` text NOT NULL,\n\t`result` text,\n\t`applied_seq` integer NOT NULL,\n\t`applied_at` integer NOT NULL,\n\tFOREIGN KEY (`entry_id`) REFERENCES `entries`(`id`) ON UPDATE no action ON DELETE no action\n);\n",
      "\nCREATE INDEX `applied_session_seq` ON `applied` (`session_id`,`applied_seq`);",
      "\nCREATE TABLE `branches` (\n\t`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,\n\t`id` text NOT NULL,\n\t`session_id` text NOT NULL,\n\t`parent_id` text,\n\t`fork_checkpoint_id` text,\n\t`fork_position` integer NOT NULL,\n\t`fork_entry_id` text,\n\t`name` text,\n\t`reason` text NOT NULL,\n\t`created_at` integer NOT NULL,\n\tFOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE no action\n);\n",
      "\nCREATE UNIQUE INDEX `branches_id` ON `branches` (`id`);",
      "\nCREATE INDEX `branches_session` ON `branches` (`session_id`);",
      "\nCREATE TABLE `checkpoints` (\n\t`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,\n\t`id` text NOT NULL,\n\t`session_id` text NOT NULL,\n\t`branch_id` text NOT NULL,\n\t`position` integer NOT NULL,\n\t`name` text,\n\t`auto` integer NOT NULL,\n\t`metadata` text,\n\t`user_id` text NOT NULL,\n\t`state_id` integer,\n\t`head_hash` text NOT NULL,\n\t`checksum` text NOT NULL,\n\t`created_at` integer NOT NULL,\n\t`expires_at` integer,\n\tFOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE no action,\n\tFOREIGN KEY (`branch_id`) REFERENCES `branches`(`id`) ON UPDATE no action ON DELETE no action\n);\n",
      "\nCREATE UNIQUE INDEX `checkpoints_id` ON `checkpoints` (`id`);",
      "\nCREATE INDEX `checkpoints_user_seq` ON `checkpoints` (`user_id`,`seq`);",
      "\nCREATE INDEX `checkpoints_user_session_seq` ON `checkpoints` (`user_id`,`session_id`,`seq`);",
      "\nCREATE INDEX `checkpoints_expires` ON `checkpoints` (`expires_at`) WHERE expires_at IS NOT NULL;",
      "\nCREATE TABLE `entries` (\n\t`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,\n\t`id` text NOT NULL,\n\t`branch_id` text NOT NULL,\n\t`position` integer NOT NULL,\n\t`kind` text NOT NULL,\n\t`role` text,\n\t`content` text,\n\t`tool` text,\n\t`call_id` text,\n\t`client_id` text,\n\t`metadata` text,\n\t`state_id` integer,\n\t`msg_count` integer NOT NULL,\n\t`hash` blob NOT NULL,\n\t`created_at` integer NOT NULL,\n\tFOREIGN KEY (`branch_id`) REFERENCES `branches`(`id`) ON UPDATE no action ON DELETE no action\n);\n",
      "\nCREATE UNIQUE INDEX `entries_id` ON `entries` (`id`);",
      "\nCREATE UNIQUE INDEX `entries_branch_position` ON `entries` (`branch_id`,`position`);",
      "\nCREATE INDEX `entries_branch_tools` ON `entries` (`branch_id`,`position`) WHERE kind = 'tool';",
      "\nCREATE TABLE `events` (\n\t`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,\n\t`session_id` text NOT NULL,\n\t`kind` text NOT NULL,\n\t`ref_id` text NOT NULL,\n\t`branch_id` text NOT NULL,\n\t`detail` text,\n\t`created_at` integer NOT NULL\n);\n",
      "\nCREATE INDEX `events_session_seq` ON `events` (`session_id`,`seq`);",
      "\nCREATE TABLE `move_steps` (\n\t`move_id` text NOT NULL,\n\t`idx` integer NOT NULL,\n\t`op` text NOT NULL,\n\t`entry_id` text NOT NULL,\n\t`status` text NOT NULL,\n\t`result` text,\n\t`error` text,\n\tPRIMARY KEY(`move_id`, `idx`)\n);\n",
      "\nCREATE TABLE `moves` (\n\t`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,\n\t`id` text NOT NULL,\n\t`session_id` text NOT NULL,\n\t`kind` text NOT NULL,\n\t`spec` text NOT NULL,\n\t`status` text NOT NULL,\n\t`pid` integer NOT NULL,\n\t`created_at` integer NOT NULL,\n\t`finished_at` integer\n);\n",
      "\nCREATE UNIQUE INDEX `moves_id` ON `moves` (`id`);",
      "\nCREATE INDEX `moves_status` ON `moves` (`status`);",
      "\nCREATE INDEX `moves_session` ON `moves` (`session_id`);",
      "\nCREATE TABLE `sessions` (\n\t`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,\n\t`id` text NOT NULL,\n\t`user_id` text NOT NULL,\n\t`title` text,\n\t`metadata` text,\n\t`current_branch_id` text NOT NULL,\n\t`origin_session_id` text,\n\t`origin_checkpoint_id` text,\n\t`has_tools` integer DEFAULT false NOT NULL,\n\t`created_at` integer NOT NULL,\n\t`updated_at` integer NOT NULL\n);\n",
      "\nCREATE UNIQUE INDEX `sessions_id` ON `sessions` (`id`);",
      "\nCREATE INDEX `sessions_user_seq` ON `sessions` (`user_id`,`seq`);",
      "\nCREATE TABLE `state_snapshots` (\n\t`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,\n\t`hash` text NOT NULL,\n\t`body` text NOT NULL\n);\n",
      "\nCREATE UNIQUE INDEX `state_snapshots_hash` ON `state_snapshots` (`hash`);",
      "\nCREATE TABLE `tool_results` (\n\t`entry_id` text PRIMARY KEY NOT NULL,\n\t`status` text NOT NULL,\n\t`result` text,\n\t`error` text,\n\t`hash` text NOT NULL,\n\t`completed_at` integer NOT NULL,\n\tFOREIGN KEY (`entry_id`) REFERENCES `entries`(`id`) ON UPDATE no action ON DELETE no action\n);\n"
    ]
  },
  {
    "tag": "0001_rowids_listing_index_imported_calls_pid_start",
    "folderMillis": 1795364198666,
    "hash": "226989d7bbbf1d6de19a6e07f4b4df17a17209f8bc1705b32279d8683bf8c4c9",
    "sql": [
      "CREATE TABLE `imported_calls` (\n\t`entry_id` text PRIMARY KEY NOT NULL,\n\t`session_id` text NOT NULL,\n\tFOREIGN KEY (`entry_id`) REFERENCES `entries`(`id`) ON UPDATE no action ON DELETE no action\n);\n",
      "\nCREATE INDEX `imported_calls_session` ON `imported_calls` (`session_id`);",
      "\nPRAGMA foreign_keys=OFF;",
      "\nCREATE TABLE `__new_checkpoints` (\n\t`seq` integer PRIMARY KEY NOT NULL,\n\t`id` text NOT NULL,\n\t`session_id` text NOT NULL,\n\t`branch_id` text NOT NULL,\n\t`position` integer NOT NULL,\n\t`name` text,\n\t`auto` integer NOT NULL,\n\t`metadata` text,\n\t`user_id` text NOT NULL,\n\t`state_id` integer,\n\t`head_hash` text NOT NULL,\n\t`checksum` text NOT NULL,\n\t`created_at` integer NOT NULL,\n\t`expires_at` integer,\n\tFOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE no action,\n\tFOREIGN KEY (`branch_id`) REFERENCES `branches`(`id`) ON UPDATE no action ON DELETE no action\n);\n",
      "\nINSERT INTO `__new_checkpoints`(\"seq\", \"id\", \"session_id\", \"branch_id\", \"position\", \"name\", \"auto\", \"metadata\", \"user_id\", \"state_id\", \"head_hash\", \"checksum\", \"created_at\", \"expires_at\") SELECT \"seq\", \"id\", \"session_id\", \"branch_id\", \"position\", \"name\", \"auto\", \"metadata\", \"user_id\", \"state_id\", \"head_hash\", \"checksum\", \"created_at\", \"expires_at\" FROM `checkpoints`;",
      "\nDROP TABLE `checkpoints`;",
      "\nALTER TABLE `__new_checkpoints` RENAME TO `checkpoints`;",
      "\nPRAGMA foreign_keys=ON;",
      "\nCREATE UNIQUE INDEX `checkpoints_id` ON `checkpoints` (`id`);",
      "\nCREATE INDEX `checkpoints_user_listing` ON `checkpoints` (`user_id`,`seq`,`id`,`session_id`,`branch_id`,`position`,`name`,`auto`,`metadata`,`checksum`,`created_at`,`expires_at`);",
      "\nCREATE INDEX `checkpoints_user_session_seq` ON `checkpoints` (`user_id`,`session_id`,`seq`);",
      "\nCREATE INDEX `checkpoints_expires` ON `checkpoints` (`expires_at`) WHERE expires_at IS NOT NULL;",
      "\nCREATE TABLE `__new_branches` (\n\t`seq` integer PRIMARY KEY NOT NULL,\n\t`id` text NOT NULL,\n\t`session_id` text NOT NULL,\n\t`parent_id` text,\n\t`fork_checkpoint_id` text,\n\t`fork_position` integer NOT NULL,\n\t`fork_entry_id` text,\n\t`name` text,\n\t`reason` text NOT NULL,\n\t`created_at` integer NOT NULL,\n\tFOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE no action\n);\n",
      "\nINSERT INTO `__new_branches`(\"seq\", \"id\", \"session_id\", \"parent_id\", \"fork_checkpoint_id\", \"fork_position\", \"fork_entry_id\", \"name\", \"reason\", \"created_at\") SELECT \"seq\", \"id\", \"session_id\", \"parent_id\", \"fork_checkpoint_id\", \"fork_position\", \"fork_entry_id\", \"name\", \"reason\", \"created_at\" FROM `branches`;",
      "\nDROP TABLE `branches`;",
      "\nALTER TABLE `__new_branches` RENAME TO `branches`;",
      "\nCREATE UNIQUE INDEX `branches_id` ON `branches` (`id`);",
      "\nCREATE INDEX `branches_session` ON `branches` (`session_id`);",
      "\nCREATE TABLE `__new_entries` (\n\t`seq` integer PRIMARY KEY NOT NULL,\n\t`id` text NOT NULL,\n\t`branch_id` text NOT NULL,\n\t`position` integer NOT NULL,\n\t`kind` text NOT NULL,\n\t`role` text,\n\t`content` text,\n\t`tool` text,\n\t`call_id` text,\n\t`client_id` text,\n\t`metadata` text,\n\t`state_id` integer,\n\t`msg_count` integer NOT NULL,\n\t`hash` blob NOT NULL,\n\t`created_at` integer NOT NULL,\n\tFOREIGN KEY (`branch_id`) REFERENCES `branches`(`id`) ON UPDATE no action ON DELETE no action\n);\n",
      "\nINSERT INTO `__new_entries`(\"seq\", \"id\", \"branch_id\", \"position\", \"kind\", \"role\", \"content\", \"tool\", \"call_id\", \"client_id\", \"metadata\", \"state_id\", \"msg_count\", \"hash\", \"created_at\") SELECT \"seq\", \"id\", \"branch_id\", \"position\", \"kind\", \"role\", \"content\", \"tool\", \"call_id\", \"client_id\", \"metadata\", \"state_id\", \"msg_count\", \"hash\", \"created_at\" FROM `entries`;",
      "\nDROP TABLE `entries`;",
      "\nALTER TABLE `__new_entries` RENAME TO `entries`;",
      "\nCREATE UNIQUE INDEX `entries_id` ON `entries` (`id`);",
      "\nCREATE UNIQUE INDEX `entries_branch_position` ON `entries` (`branch_id`,`position`);",
      "\nCREATE INDEX `entries_branch_tools` ON `entries` (`branch_id`,`position`) WHERE kind = 'tool';",
      "\nCREATE TABLE `__new_sessions` (\n\t`seq` integer PRIMARY KEY NOT NULL,\n\t`id` text NOT NULL,\n\t`user_id` text NOT NULL,\n\t`title` text,\n\t`metadata` text,\n\t`current_branch_id` text NOT NULL,\n\t`origin_session_id` text,\n\t`origin_checkpoint_id` text,\n\t`has_tools` integer DEFAULT false NOT NULL,\n\t`created_at` integer NOT NULL,\n\t`updated_at` integer NOT NULL\n);\n",
      "\nINSERT INTO `__new_sessions`(\"seq\", \"id\", \"user_id\", \"title\", \"metadata\", \"current_branch_id\", \"origin_session_id\", \"origin_checkpoint_id\", \"has_tools\", \"created_at\", \"updated_at\") SELECT \"seq\", \"id\", \"user_id\", \"title\", \"metadata\", \"current_branch_id\", \"origin_session_id\", \"origin_checkpoint_id\", \"has_tools\", \"created_at\", \"updated_at\" FROM `sessions`;",
      "\nDROP TABLE `sessions`;",
      "\nALTER TABLE `__new_sessions` RENAME TO `sessions`;",
      "\nCREATE UNIQUE INDEX `sessions_id` ON `sessions` (`id`);",
      "\nCREATE INDEX `sessions_user_seq` ON `sessions` (`user_id`,`seq`);",
      "\nALTER TABLE `moves` ADD `pid_start` text;"
    ]
  },
  {
    "tag": "0002_workspaces",
    "folderMillis": 1795364778164,
    "hash": "94b212ea440da3d332b97e2fd8da8a0c94449fe05e710cc107387b08f53024bf",
    "sql": [
      "CREATE TABLE `checkpoint_files` (\n\t`checkpoint_id` text PRIMARY KEY NOT NULL,\n\t`manifest_id` integer NOT NULL,\n\t`dir` text NOT NULL,\n\t`exclude` text NOT NULL,\n\tFOREIGN KEY (`checkpoint_id`) REFERENCES `checkpoints`(`id`) ON UPDATE no action ON DELETE no action\n);\n",
      "\nCREATE TABLE `file_blobs` (\n\t`hash` text PRIMARY KEY NOT NULL,\n\t`content` blob NOT NULL\n);\n",
      "\nCREATE TABLE `file_manifests` (\n\t`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,\n\t`hash` text NOT NULL,\n\t`body` text NOT NULL\n);\n",
      "\nCREATE UNIQUE INDEX `file_manifests_hash` ON `file_manifests` (`hash`);",
      "\nCREATE TABLE `workspaces` (\n\t`session_id` text PRIMARY KEY NOT NULL,\n\t`dir` text NOT NULL,\n\t`exclude` text NOT NULL,\n\t`manifest_id` integer NOT NULL,\n\t`updated_at` integer NOT NULL,\n\tFOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE no action\n);\n",
      "\nALTER TABLE `sessions` ADD `has_workspace` integer DEFAULT false NOT NULL;"
    ]
  },
  {
    "tag": "0003_workspace_restore_journal",
    "folderMillis": 1795372440215,
    "hash": "21dac7f031acc9e3d2be29409277afa178043896010379a874a31b06d83a9e54",
    "sql": [
      "ALTER TABLE `workspaces` ADD `restoring` text;"
    ]
  },
  {
    "tag": "0004_langgraph_saver",
    "folderMillis": 1795375948136,
    "hash": "efde0476acaa83b2d22dc3c2904372559cbf84770c85a6c75ad9eb940a2c61f8",
    "sql": [
      "CREATE TABLE `lg_blobs` (\n\t`session_id` text NOT NULL,\n\t`channel` text NOT NULL,\n\t`version` text NOT NULL,\n\t`type` text NOT NULL,\n\t`value` blob NOT NULL,\n\tPRIMARY KEY(`session_id`, `channel`, `version`)\n);\n",
      "\nCREATE TABLE `lg_checkpoints` (\n\t`session_id` text NOT NULL,\n\t`checkpoint_id` text NOT NULL,\n\t`parent_checkpoint_id` text,\n\t`fp_checkpoint_id` text NOT NULL,\n\t`type` text NOT NULL,\n\t`checkpoint` blob NOT NULL,\n\t`metadata_type` text NOT NULL,\n\t`metadata` blob NOT NULL,\n\t`messages_version` text,\n\tPRIMARY KEY(`session_id`, `checkpoint_id`),\n\tFOREIGN KEY (`fp_checkpoint_id`) REFERENCES `checkpoints`(`id`) ON UPDATE no action ON DELETE no action\n);\n",
      "\nCREATE TABLE `lg_threads` (\n\t`user_id` text NOT NULL,\n\t`thread_id` text NOT NULL,\n\t`checkpoint_ns` text NOT NULL,\n\t`session_id` text NOT NULL,\n\t`start_checkpoint_id` text NOT NULL,\n\tPRIMARY KEY(`user_id`, `thread_id`, `checkpoint_ns`),\n\tFOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE no action\n);\n",
      "\nCREATE UNIQUE INDEX `lg_threads_session` ON `lg_threads` (`session_id`);",
      "\nCREATE TABLE `lg_writes` (\n\t`session_id` text NOT NULL,\n\t`checkpoint_id` text NOT NULL,\n\t`task_id` text NOT NULL,\n\t`idx` integer NOT NULL,\n\t`channel` text NOT NULL,\n\t`type` text NOT NULL,\n\t`value` blob NOT NULL,\n\t`task_path` text DEFAULT '' NOT NULL,\n\tPRIMARY KEY(`session_id`, `checkpoint_id`, `task_id`, `idx`)\n);\n"
    ]
  },
  {
    "tag": "0005_invocation_reversible",
    "folderMillis": 1795506227231,
    "hash": "05ed5809cc41af49a3fde3df3c2129e80bcaf01cf5779d434537f50a9a637902",
    "sql": [
      "ALTER TABLE `entries` ADD `reversible` integer;"
    ]
  },
  {
    "tag": "0006_mature_stature",
    "folderMillis": 1795731674926,
    "hash": "369f56163f961e2523f9465d4ef5e74eb9618f97467b441984c9f7f44657aef9",
    "sql": [
      "ALTER TABLE `workspaces` ADD `host` text;"
    ]
  },
  {
    "tag": "0007_reflective_brood",
    "folderMillis": 1795735124693,
    "hash": "5d4227a664b12204dce4ba01b622e2782b29ce0c5e0414657e727759dd1e18ef",
    "sql": [
      "ALTER TABLE `state_snapshots` ADD `version` integer DEFAULT 1 NOT NULL;"
    ]
  },
  {
    "tag": "0008_loud_sage",
    "folderMillis": 1795735279823,
    "hash": "82e12779305454bd30379b9f671df0dcd1b3f2f595421863f60e24972d9f23ef",
    "sql": [
      "CREATE TABLE `move_history` (\n\t`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,\n\t`session_id` text NOT NULL,\n\t`kind` text NOT NULL,\n\t`from_branch_id` text NOT NULL,\n\t`from_position` integer NOT NULL,\n\t`to_branch_id` text NOT NULL,\n\t`to_position` integer NOT NULL,\n\t`undone_at` integer,\n\t`created_at` integer NOT NULL\n);\n",
      "\nCREATE INDEX `move_history_session_seq` ON `move_history` (`session_id`,`seq`);"
    ]
  },
  {
    "tag": "0009_famous_gressill",
    "folderMillis": 1795736043269,
    "hash": "873fc795c7fe6fb247fc34fce746aa7113f2bbf633989164cf39d1ba0ca6ab73",
    "sql": [
      "CREATE TABLE `checkpoint_metadata` (\n\t`cp_user` text NOT NULL,\n\t`key` text NOT NULL,\n\t`value` text NOT NULL,\n\t`cp_seq` integer NOT NULL,\n\tPRIMARY KEY(`cp_user`, `key`, `value`, `cp_seq`)\n);\n",
      "\nCREATE INDEX `checkpoint_metadata_seq` ON `checkpoint_metadata` (`cp_seq`);",
      "\nALTER TABLE `sessions` ADD `retention` text;",
      "\nALTER TABLE `sessions` ADD `retention_aged_at` integer DEFAULT 0 NOT NULL;",
      "\nCREATE INDEX `checkpoints_session_name_seq` ON `checkpoints` (`session_id`,`name`,`seq`);",
      "\nCREATE INDEX `checkpoints_session_created` ON `checkpoints` (`session_id`,`created_at`,`seq`);",
      "\nCREATE INDEX `entries_branch_created` ON `entries` (`branch_id`,`created_at`,`seq`);",
      "\nCREATE INDEX `events_session_created` ON `events` (`session_id`,`created_at`,`seq`);"
    ]
  },
  {
    "tag": "0010_tearful_prism",
    "folderMillis": 1795736100349,
    "hash": "d44745a38f09797fb081dcb9521d3c0a3ddf02c650de7ca9c38c06e25eb09c37",
    "sql": [
      "CREATE INDEX `branches_session_fork_entry` ON `branches` (`session_id`,`fork_entry_id`);"
    ]
  },
  {
    "tag": "0011_backfill_checkpoint_metadata",
    "folderMillis": 1795743505933,
    "hash": "f76b2d8e86bdedba88d8290687e40dd6e74fd57660d98961e4f9850a1aaa8fe2",
    "sql": [
      "-- Fills the metadata index for checkpoints made before it existed, as the store writes it for new ones (indexedMetadata):\n-- one row per top-level scalar, its value as the JSON text stored in the checkpoint's metadata (`->` returns that text\n-- as written, so numbers keep JavaScript's spelling). Keys and values over 256 characters are left out (counted in code\n-- points: one beyond the Basic Multilingual Plane may let a row in that the code leaves out, which no filter can reach).\nINSERT OR IGNORE INTO `checkpoint_metadata` (`cp_user`, `key`, `value`, `cp_seq`)\nSELECT c.`user_id`, j.`key`, c.`metadata` -> j.`fullkey`, c.`seq`\nFROM `checkpoints` c, json_each(c.`metadata`) j\nWHERE c.`metadata` IS NOT NULL AND json_valid(c.`metadata`) AND json_type(c.`metadata`) = 'object'\n  AND j.`type` NOT IN ('object', 'array')\n  AND length(j.`key`) <= 256 AND length(c.`metadata` -> j.`fullkey`) <= 256;\n"
    ]
  },
  {
    "tag": "0012_lean_black_knight",
    "folderMillis": 1795744722919,
    "hash": "f2ebdb1a891880032b302c3fc974487e2729f3eda99af5f7d599d11f3797ffb6",
    "sql": [
      "CREATE INDEX `move_history_undone` ON `move_history` (`session_id`,`seq`) WHERE undone_at IS NOT NULL;"
    ]
  },
  {
    "tag": "0013_great_korg",
    "folderMillis": 1795747227075,
    "hash": "76e42939d7739973c9f8abf258633362602d9d281a2906654a4f13493cf88e48",
    "sql": [
      "DROP INDEX `branches_session`;"
    ]
  },
  {
    "tag": "0014_dazzling_leo",
    "folderMillis": 1795747371634,
    "hash": "ca474b3f078f32dbd09d60805d68688d901c403b900a2747af95ad35fa05f359",
    "sql": [
      "DROP INDEX `checkpoints_session_name_seq`;",
      "\nALTER TABLE `checkpoints` ADD `weighed` integer DEFAULT false NOT NULL;",
      "\nUPDATE `checkpoints` SET `weighed` = 1 WHERE `session_id` IN (SELECT `id` FROM `sessions` WHERE `retention` IS NOT NULL);",
      "\nCREATE INDEX `checkpoints_session_name_seq` ON `checkpoints` (`session_id`,`name`,`seq`) WHERE weighed = 1;"
    ]
  },
  {
    "tag": "0015_vengeful_lady_deathstrike",
    "folderMillis": 1795751847143,
    "hash": "b43c6cfdba110f8fc2a0b7e4d8f7d8361ea948acc49616916430d36643bdbcca",
    "sql": [
      "DROP INDEX `checkpoints_session_created`;",
      "\nCREATE INDEX `checkpoints_session_weighed_created` ON `checkpoints` (`session_id`,`created_at`,`seq`) WHERE weighed = 1;",
      "\nDROP INDEX `entries_branch_created`;",
      "\nDROP INDEX `events_session_created`;",
      "\nALTER TABLE `sessions` ADD `times_ordered` integer DEFAULT false NOT NULL;"
    ]
  },
  {
    "tag": "0016_military_wind_dancer",
    "folderMillis": 1795752569639,
    "hash": "978f947e22c12ee3282929a5a22de95fbb2366f92f9cbe2c6569e419447f8ee0",
    "sql": [
      "-- Moves to the session's move stack: each history row points at the one below it, the session at its newest standing\n-- row and its undone rows (the oldest undone last: the next to redo), read from undone_at before its index goes.\nALTER TABLE `move_history` ADD `prev` text;",
      "\nALTER TABLE `branches` ADD `move_kind` text;",
      "\nALTER TABLE `branches` ADD `move_from_branch_id` text;",
      "\nALTER TABLE `branches` ADD `move_from_position` integer;",
      "\nALTER TABLE `branches` ADD `move_to_position` integer;",
      "\nALTER TABLE `branches` ADD `move_prev` text;",
      "\nALTER TABLE `sessions` ADD `move_top` text;",
      "\nALTER TABLE `sessions` ADD `move_redo` text;",
      "\nUPDATE `move_history` SET `prev` = (SELECT 'm:' || p.`seq` FROM `move_history` p WHERE p.`session_id` = `move_history`.`session_id` AND p.`seq` < `move_history`.`seq` ORDER BY p.`seq` DESC LIMIT 1);",
      "\nUPDATE `sessions` SET `move_top` = (SELECT 'm:' || `seq` FROM `move_history` WHERE `session_id` = `sessions`.`id` AND `undone_at` IS NULL ORDER BY `seq` DESC LIMIT 1), `move_redo` = (SELECT json_group_array('m:' || `seq`) FROM (SELECT `seq` FROM `move_history` WHERE `session_id` = `sessions`.`id` AND `undone_at` IS NOT NULL ORDER BY `seq` DESC)) WHERE `id` IN (SELECT `session_id` FROM `move_history`);",
      "\nUPDATE `sessions` SET `move_redo` = NULL WHERE `move_redo` = '[]';",
      "\nDROP INDEX `move_history_undone`;"
    ]
  },
  {
    "tag": "0017_running_calls",
    "folderMillis": 1795763723706,
    "hash": "3df2636c515909ba0bd797bc705c084ddc22fb094ad0c6b042678e284e2e61ec",
    "sql": [
      "CREATE TABLE `running_calls` (\n\t`entry_id` text PRIMARY KEY NOT NULL,\n\t`session_id` text NOT NULL,\n\t`pid` integer NOT NULL,\n\t`pid_start` text,\n\tFOREIGN KEY (`entry_id`) REFERENCES `entries`(`id`) ON UPDATE no action ON DELETE no action\n);\n",
      "\nCREATE INDEX `running_calls_session` ON `running_calls` (`session_id`);"
    ]
  },
  {
    "tag": "0018_request_ledger",
    "folderMillis": 1795917804322,
    "hash": "084ca21808287c1c59f8ce78b6ab8922018d1acb93e5f776c1bd44dcb6d85da8",
    "sql": [
      "CREATE TABLE `requests` (\n\t`session_id` text NOT NULL,\n\t`request_id` text NOT NULL,\n\t`fingerprint` text NOT NULL,\n\t`answer` text NOT NULL,\n\t`created_at` integer NOT NULL,\n\tPRIMARY KEY(`session_id`, `request_id`)\n);\n"
    ]
  },
  {
    "tag": "0019_checkpoint_fk_indexes",
    "folderMillis": 1795918845559,
    "hash": "a39e130103f50c31953ee2ba1b46049278bf3bc7fd7ce68740f1790e90637499",
    "sql": [
      "CREATE INDEX `checkpoints_branch` ON `checkpoints` (`branch_id`);",
      "\nCREATE INDEX `checkpoints_session` ON `checkpoints` (`session_id`);",
      "\nCREATE INDEX `lg_checkpoints_fp_checkpoint` ON `lg_checkpoints` (`fp_checkpoint_id`);"
    ]
  },
  {
    "tag": "0020_workspace_trees_packs_stats",
    "folderMillis": 1795920941614,
    "hash": "0dbbd13e590bd162cfc4d7934c969c795b3018b9c147f4469f3fe5bc8beaa033",
    "sql": [
      "CREATE TABLE `file_packs` (\n\t`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,\n\t`codec` text NOT NULL,\n\t`content` blob NOT NULL\n);\n",
      "\nCREATE TABLE `file_trees` (\n\t`hash` text PRIMARY KEY NOT NULL,\n\t`body` text NOT NULL\n);\n",
      "\nCREATE TABLE `workspace_stats` (\n\t`session_id` text NOT NULL,\n\t`dir` text NOT NULL,\n\t`body` blob NOT NULL,\n\tPRIMARY KEY(`session_id`, `dir`),\n\tFOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE no action\n);\n",
      "\nALTER TABLE `checkpoint_files` ADD `gitignore` integer DEFAULT false NOT NULL;",
      "\nALTER TABLE `file_blobs` ADD `pack_id` integer;",
      "\nALTER TABLE `file_blobs` ADD `pack_offset` integer;",
      "\nALTER TABLE `file_blobs` ADD `size` integer;",
      "\nALTER TABLE `file_manifests` ADD `root` text;",
      "\nALTER TABLE `workspaces` ADD `gitignore` integer DEFAULT false NOT NULL;"
    ]
  },
  {
    "tag": "0021_checkpoint_holds",
    "folderMillis": 1795921749500,
    "hash": "e9cc008c77c48e811eca71e97282c64b8f2b5b85a14c33222516a88f0d7cd1b5",
    "sql": [
      "CREATE TABLE `checkpoint_holds` (\n\t`checkpoint_id` text PRIMARY KEY NOT NULL,\n\t`session_id` text NOT NULL,\n\t`until` integer NOT NULL\n);\n",
      "\nCREATE INDEX `checkpoint_holds_session` ON `checkpoint_holds` (`session_id`);"
    ]
  },
  {
    "tag": "0022_checkpoint_unapplied",
    "folderMillis": 1795939635137,
    "hash": "22a165a709cac3f0e87395303795a7af79d4806a0cb6fb3a8e0419e27ff82d83",
    "sql": [
      "ALTER TABLE `checkpoint_files` ADD `unapplied` text;"
    ]
  },
  {
    "tag": "0023_checkpoint_unknown",
    "folderMillis": 1795940258067,
    "hash": "a8cb1cb8229580d3240022db4e5c6494552858ba52f7d18860127a4e6ec899b6",
    "sql": [
      "ALTER TABLE `checkpoint_files` ADD `unknown` text;"
    ]
  },
  {
    "tag": "0024_checkpoint_session_index",
    "folderMillis": 1795940688736,
    "hash": "fdfa0bc8aed8ee6f357623a64b37c6c462333c33d16b2ee093d5b8e8ee8a6713",
    "sql": [
      "DROP INDEX `checkpoints_user_session_seq`;",
      "\nDROP INDEX `checkpoints_session`;",
      "\nCREATE INDEX `checkpoints_session_user_seq` ON `checkpoints` (`session_id`,`user_id`,`seq`);"
    ]
  },
  {
    "tag": "0025_call_paths",
    "folderMillis": 1795962055757,
    "hash": "7c36ff2279f823080a77bca4edd4bb51f81e91a94b67e74fc00267fbee57ce0b",
    "sql": [
      "CREATE TABLE `call_paths` (\n\t`entry_id` text PRIMARY KEY NOT NULL,\n\t`session_id` text NOT NULL,\n\t`paths` text NOT NULL,\n\tFOREIGN KEY (`entry_id`) REFERENCES `entries`(`id`) ON UPDATE no action ON DELETE no action\n);\n",
      "\nCREATE INDEX `call_paths_session` ON `call_paths` (`session_id`);"
    ]
  },
  {
    "tag": "0026_replay_results",
    "folderMillis": 1795965100216,
    "hash": "9a4f6b8c55b24babff41124ffd883277bda4bdc4dba7bbdc45dba1baa79d2326",
    "sql": [
      "CREATE TABLE `replay_results` (\n\t`entry_id` text NOT NULL,\n\t`session_id` text NOT NULL,\n\t`applied_seq` integer NOT NULL,\n\t`result` text,\n\t`replayed_at` integer NOT NULL,\n\tPRIMARY KEY(`entry_id`, `applied_seq`),\n\tFOREIGN KEY (`entry_id`) REFERENCES `entries`(`id`) ON UPDATE no action ON DELETE no action\n);\n",
      "\nCREATE INDEX `replay_results_session` ON `replay_results` (`session_id`);",
      "\n-- Replays a database journaled before this table: kept here too (the application each was unnamed: 0), so prune's\n-- deleting their moves loses none.\nINSERT INTO `replay_results` (`entry_id`, `session_id`, `applied_seq`, `result`, `replayed_at`)\nSELECT `entry_id`, `session_id`, 0, `result`, `replayed_at` FROM (\n  SELECT s.`entry_id`, m.`session_id`, s.`result`, coalesce(m.`finished_at`, m.`created_at`) AS `replayed_at`,\n    row_number() OVER (PARTITION BY s.`entry_id` ORDER BY m.`seq` DESC, s.`idx` DESC) AS `newest`\n  FROM `move_steps` s JOIN `moves` m ON m.`id` = s.`move_id`\n  WHERE s.`op` = 'replay' AND s.`status` = 'done' AND s.`entry_id` IN (SELECT `id` FROM `entries`)\n) WHERE `newest` = 1;\n"
    ]
  },
  {
    "tag": "0027_checkpoint_requests",
    "folderMillis": 1796002703196,
    "hash": "a545d194c043e51e1e64d379e29c5f783fd7dfffeb683b72669520ccb6423caf",
    "sql": [
      "ALTER TABLE `checkpoints` ADD `request_id` text;",
      "\nALTER TABLE `checkpoints` ADD `request_fingerprint` text;",
      "\nALTER TABLE `checkpoints` ADD `request_answer` text;",
      "\nCREATE UNIQUE INDEX `checkpoints_request` ON `checkpoints` (`session_id`,`request_id`) WHERE request_id IS NOT NULL;"
    ]
  },
  {
    "tag": "0028_set_aside",
    "folderMillis": 1796023295509,
    "hash": "7a703dd457f533467f1c555adf0c3ef00e43a69574e612f8d5add80ed4a8800f",
    "sql": [
      "CREATE TABLE `set_aside` (\n\t`entry_id` text PRIMARY KEY NOT NULL,\n\t`session_id` text NOT NULL,\n\t`set_at` integer NOT NULL,\n\tFOREIGN KEY (`entry_id`) REFERENCES `entries`(`id`) ON UPDATE no action ON DELETE no action\n);\n",
      "\nCREATE INDEX `set_aside_session` ON `set_aside` (`session_id`);"
    ]
  },
  {
    "tag": "0029_set_aside_branch",
    "folderMillis": 1796029583796,
    "hash": "317d4ed76f6026b98212059090b94418edc938a36c53e286d9deafffdd71c44f",
    "sql": [
      "ALTER TABLE `set_aside` ADD `branch_id` text;"
    ]
  },
  {
    "tag": "0030_moves_running",
    "folderMillis": 1796033428214,
    "hash": "9598baceaa4d8dbc362a581c6c98b675ba171ae05b3bef07431b5ff3eef295ba",
    "sql": [
      "CREATE INDEX `moves_running` ON `moves` (`session_id`) WHERE status = 'running';"
    ]
  },
  {
    "tag": "0031_set_aside_position",
    "folderMillis": 1796044202135,
    "hash": "1863229c5c3349333659f772f53dc8692aeb557fded6905b07eff822778873da",
    "sql": [
      "ALTER TABLE `set_aside` ADD `position` integer;"
    ]
  },
  {
    "tag": "0032_set_aside_per_branch",
    "folderMillis": 1796047491889,
    "hash": "95e06d0ad448ad99169aa5a34139905e77e51677c0b9ad9cd5365cb720c3954b",
    "sql": [
      "PRAGMA foreign_keys=OFF;",
      "\nCREATE TABLE `__new_set_aside` (\n\t`entry_id` text NOT NULL,\n\t`session_id` text NOT NULL,\n\t`branch_id` text DEFAULT '' NOT NULL,\n\t`position` integer,\n\t`set_at` integer NOT NULL,\n\tPRIMARY KEY(`entry_id`, `branch_id`),\n\tFOREIGN KEY (`entry_id`) REFERENCES `entries`(`id`) ON UPDATE no action ON DELETE no action\n);\n",
      "\nINSERT INTO `__new_set_aside`(\"entry_id\", \"session_id\", \"branch_id\", \"position\", \"set_at\") SELECT \"entry_id\", \"session_id\", coalesce(\"branch_id\", ''), \"position\", \"set_at\" FROM `set_aside`;",
      "\nDROP TABLE `set_aside`;",
      "\nALTER TABLE `__new_set_aside` RENAME TO `set_aside`;",
      "\nPRAGMA foreign_keys=ON;",
      "\nCREATE INDEX `set_aside_session` ON `set_aside` (`session_id`);"
    ]
  },
  {
    "tag": "0033_call_outputs",
    "folderMillis": 1796082462603,
    "hash": "df30d93fa6a003a5ecaa3d83479806851117c79e18ee7feabe2561d5516e2f20",
    "sql": [
      "ALTER TABLE `call_paths` ADD `outputs` text;",
      "\nALTER TABLE `call_paths` ADD `hand_edited` text;"
    ]
  },
  {
    "tag": "0034_branch_retention",
    "folderMillis": 1796118396280,
    "hash": "4cf1eaf05b754f6676b4275412787146281b230f4ee3c6f6087b6cdb67bb7c6e",
    "sql": [
      "CREATE INDEX `checkpoints_branch_kind_seq` ON `checkpoints` (`branch_id`,`auto`,`seq`) WHERE weighed = 1;"
    ]
  },
  {
    "tag": "0035_hand_edit_ids",
    "folderMillis": 1796128421726,
    "hash": "9f8fc94b194640c23c47d8572901611aaf7f82b5842968b0e5738d95ae4ba507",
    "sql": [
      "ALTER TABLE `call_paths` ADD `hand_edit_ids` text;"
    ]
  },
  {
    "tag": "0036_move_to_branch",
    "folderMillis": 1796141180240,
    "hash": "3bba41f47b097dcade2f410cccf135c4d3150dcac26301c5154fc0c955e5f455",
    "sql": [
      "ALTER TABLE `branches` ADD `move_to_branch_id` text;"
    ]
  },
  {
    "tag": "0037_continued_by",
    "folderMillis": 1796153785302,
    "hash": "5d6c52a96fd714cdf8bb5f4410678e508786fe6f4519e790d5c488167f120e0f",
    "sql": [
      "ALTER TABLE `branches` ADD `continued_by` text;",
      "\nALTER TABLE `branches` ADD `continued_at` integer;"
    ]
  },
  {
    "tag": "0038_continued_from",
    "folderMillis": 1796168568317,
    "hash": "61417c9c972472b9e12684f5e62d56cf961571d438f603540bc7e06aea7637ce",
    "sql": [
      "ALTER TABLE `branches` ADD `continued_from` integer;"
    ]
  },
  {
    "tag": "0039_named_files",
    "folderMillis": 1796182010158,
    "hash": "5cbb7f0b910f93b3f238ef2cc2d9e4bf8d6823c85917b4c1abddc63b0a52c52e",
    "sql": [
      "ALTER TABLE `tool_results` ADD `named_files` text;"
    ]
  }
];
