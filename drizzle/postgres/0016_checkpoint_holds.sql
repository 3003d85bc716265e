CREATE TABLE "checkpoint_holds" (
	"checkpoint_id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"session_id" text COLLATE "C" NOT NULL,
	"until" double precision NOT NULL
);
--> statement-breakpoint
CREATE INDEX "checkpoint_holds_session" ON "checkpoint_holds" USING btree ("session_id");