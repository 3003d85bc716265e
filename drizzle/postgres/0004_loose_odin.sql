CREATE TABLE "checkpoint_metadata" (
	"cp_user" text COLLATE "C" NOT NULL,
	"key" text COLLATE "C" NOT NULL,
	"value" text COLLATE "C" NOT NULL,
	"cp_seq" bigint NOT NULL,
	CONSTRAINT "checkpoint_metadata_cp_user_key_value_cp_seq_pk" PRIMARY KEY("cp_user","key","value","cp_seq")
);
--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "retention" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "retention_aged_at" double precision DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "checkpoint_metadata_seq" ON "checkpoint_metadata" USING btree ("cp_seq");--> statement-breakpoint
CREATE INDEX "checkpoints_session_name_seq" ON "checkpoints" USING btree ("session_id","name","seq");--> statement-breakpoint
CREATE INDEX "checkpoints_session_created" ON "checkpoints" USING btree ("session_id","created_at","seq");--> statement-breakpoint
CREATE INDEX "entries_branch_created" ON "entries" USING btree ("branch_id","created_at","seq");--> statement-breakpoint
CREATE INDEX "events_session_created" ON "events" USING btree ("session_id","created_at","seq");