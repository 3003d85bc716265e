-- A write unit that starts from what its server last wrote of a session checks it with this first, in its one round
-- trip: a session another server changed since fails the unit with FP409, and the unit runs again from a fresh read.
CREATE OR REPLACE FUNCTION forkpoint_expect_current(ok boolean) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF NOT ok THEN
    RAISE EXCEPTION 'forkpoint: the session changed since this server last wrote it' USING ERRCODE = 'FP409';
  END IF;
  RETURN true;
END
$$;
