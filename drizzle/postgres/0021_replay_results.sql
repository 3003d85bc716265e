CREATE TABLE "replay_results" (
	"entry_id" text COLLATE "C" NOT NULL,
	"session_id" text COLLATE "C" NOT NULL,
	"applied_seq" bigint NOT NULL,
	"result" text COLLATE "C",
	"replayed_at" double precision NOT NULL,
	CONSTRAINT "replay_results_entry_id_applied_seq_pk" PRIMARY KEY("entry_id","applied_seq")
);
--> statement-breakpoint
ALTER TABLE "replay_results" ADD CONSTRAINT "replay_results_entry_id_entries_id_fk" FOREIGN KEY ("entry_id") REFERENCES "public"."entries"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "replay_results_session" ON "replay_results" USING btree ("session_id");--> statement-breakpoint
-- Replays a database journaled before this table: kept here too (the application each was unnamed: 0), so prune's
-- deleting their moves loses none.
INSERT INTO "replay_results" ("entry_id", "session_id", "applied_seq", "result", "replayed_at")
SELECT DISTINCT ON (s."entry_id") s."entry_id", m."session_id", 0, s."result", coalesce(m."finished_at", m."created_at")
FROM "move_steps" s JOIN "moves" m ON m."id" = s."move_id"
WHERE s."op" = 'replay' AND s."status" = 'done' AND s."entry_id" IN (SELECT "id" FROM "entries")
ORDER BY s."entry_id", m."seq" DESC, s."idx" DESC;
