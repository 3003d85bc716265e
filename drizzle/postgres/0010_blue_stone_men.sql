-- Moves to the session's move stack: each history row points at the one below it, the session at its newest standing
-- row and its undone rows (the oldest undone last: the next to redo), read from undone_at before its index goes.
ALTER TABLE "branches" ADD COLUMN "move_kind" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "branches" ADD COLUMN "move_from_branch_id" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "branches" ADD COLUMN "move_from_position" integer;--> statement-breakpoint
ALTER TABLE "branches" ADD COLUMN "move_to_position" integer;--> statement-breakpoint
ALTER TABLE "branches" ADD COLUMN "move_prev" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "move_history" ADD COLUMN "prev" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "move_top" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "move_redo" text COLLATE "C";--> statement-breakpoint
UPDATE "move_history" h SET "prev" = (SELECT 'm:' || p."seq" FROM "move_history" p WHERE p."session_id" = h."session_id" AND p."seq" < h."seq" ORDER BY p."seq" DESC LIMIT 1);--> statement-breakpoint
UPDATE "sessions" s SET "move_top" = (SELECT 'm:' || "seq" FROM "move_history" WHERE "session_id" = s."id" AND "undone_at" IS NULL ORDER BY "seq" DESC LIMIT 1), "move_redo" = (SELECT json_agg('m:' || "seq" ORDER BY "seq" DESC)::text FROM "move_history" WHERE "session_id" = s."id" AND "undone_at" IS NOT NULL) WHERE "id" IN (SELECT "session_id" FROM "move_history");--> statement-breakpoint
DROP INDEX "move_history_undone";