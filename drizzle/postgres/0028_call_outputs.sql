ALTER TABLE "call_paths" ADD COLUMN "outputs" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "call_paths" ADD COLUMN "hand_edited" text COLLATE "C";