DROP INDEX "checkpoints_branch";--> statement-breakpoint
CREATE INDEX "checkpoints_branch_kind_seq" ON "checkpoints" USING btree ("branch_id","auto","seq") WHERE weighed;--> statement-breakpoint
CREATE INDEX "checkpoints_branch" ON "checkpoints" USING btree ("branch_id","seq");