CREATE TABLE "running_calls" (
	"entry_id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"session_id" text COLLATE "C" NOT NULL,
	"pid" integer NOT NULL,
	"pid_start" text COLLATE "C",
	"lease_until" double precision NOT NULL
);
--> statement-breakpoint
ALTER TABLE "running_calls" ADD CONSTRAINT "running_calls_entry_id_entries_id_fk" FOREIGN KEY ("entry_id") REFERENCES "public"."entries"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "running_calls_session" ON "running_calls" USING btree ("session_id");