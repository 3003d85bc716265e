ALTER TABLE "set_aside" DROP CONSTRAINT "set_aside_pkey";--> statement-breakpoint
UPDATE "set_aside" SET "branch_id" = '' WHERE "branch_id" IS NULL;--> statement-breakpoint
ALTER TABLE "set_aside" ALTER COLUMN "branch_id" SET DEFAULT '';--> statement-breakpoint
ALTER TABLE "set_aside" ALTER COLUMN "branch_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "set_aside" ADD CONSTRAINT "set_aside_entry_id_branch_id_pk" PRIMARY KEY("entry_id","branch_id");
