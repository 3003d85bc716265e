CREATE INDEX "checkpoints_branch" ON "checkpoints" USING btree ("branch_id");--> statement-breakpoint
CREATE INDEX "lg_checkpoints_fp_checkpoint" ON "lg_checkpoints" USING btree ("fp_checkpoint_id");