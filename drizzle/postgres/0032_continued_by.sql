ALTER TABLE "branches" ADD COLUMN "continued_by" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "branches" ADD COLUMN "continued_at" integer;