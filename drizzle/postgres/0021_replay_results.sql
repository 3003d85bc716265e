CREATE TABLE "replay_results" (
	"entry_id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"session_id" text COLLATE "C" NOT NULL,
	"result" text COLLATE "C",
	"replayed_at" double precision NOT NULL
);
--> statement-breakpoint
ALTER TABLE "replay_results" ADD CONSTRAINT "replay_results_entry_id_entries_id_fk" FOREIGN KEY ("entry_id") REFERENCES "public"."entries"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "replay_results_session" ON "replay_results" USING btree ("session_id");