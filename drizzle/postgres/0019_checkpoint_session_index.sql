DROP INDEX "checkpoints_user_session_seq";--> statement-breakpoint
DROP INDEX "checkpoints_session_name_seq";--> statement-breakpoint
CREATE INDEX "checkpoints_session_user_seq" ON "checkpoints" USING btree ("session_id","user_id","seq");--> statement-breakpoint
CREATE INDEX "checkpoints_session_name_seq" ON "checkpoints" USING btree ("session_id","name","seq") WHERE weighed;