CREATE TABLE "set_aside" (
	"entry_id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"session_id" text COLLATE "C" NOT NULL,
	"set_at" double precision NOT NULL
);
--> statement-breakpoint
ALTER TABLE "set_aside" ADD CONSTRAINT "set_aside_entry_id_entries_id_fk" FOREIGN KEY ("entry_id") REFERENCES "public"."entries"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "set_aside_session" ON "set_aside" USING btree ("session_id");