ALTER TABLE "checkpoints" ADD COLUMN "request_id" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "checkpoints" ADD COLUMN "request_fingerprint" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "checkpoints" ADD COLUMN "request_answer" text COLLATE "C";--> statement-breakpoint
CREATE UNIQUE INDEX "checkpoints_request" ON "checkpoints" USING btree ("session_id","request_id") WHERE request_id IS NOT NULL;