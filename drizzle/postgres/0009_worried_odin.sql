DROP INDEX "checkpoints_session_created";--> statement-breakpoint
DROP INDEX "entries_branch_created";--> statement-breakpoint
DROP INDEX "events_session_created";--> statement-breakpoint
ALTER TABLE "checkpoints" ADD COLUMN "weighed" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "times_ordered" boolean DEFAULT false NOT NULL;--> statement-breakpoint
UPDATE "checkpoints" SET "weighed" = true WHERE "session_id" IN (SELECT "id" FROM "sessions" WHERE "retention" IS NOT NULL);--> statement-breakpoint
CREATE INDEX "checkpoints_session_weighed_created" ON "checkpoints" USING btree ("session_id","created_at","seq") WHERE weighed;