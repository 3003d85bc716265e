CREATE TABLE "call_paths" (
	"entry_id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"session_id" text COLLATE "C" NOT NULL,
	"paths" text COLLATE "C" NOT NULL
);
--> statement-breakpoint
ALTER TABLE "call_paths" ADD CONSTRAINT "call_paths_entry_id_entries_id_fk" FOREIGN KEY ("entry_id") REFERENCES "public"."entries"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "call_paths_session" ON "call_paths" USING btree ("session_id");