-- Fills the metadata index for checkpoints made before it existed, as the store writes it for new ones (indexedMetadata):
-- one row per top-level scalar, its value as the JSON text stored in the checkpoint's metadata (the json type keeps
-- each value's text as written, so numbers keep JavaScript's spelling). Keys and values over 256 characters are left
-- out (counted in code points: one beyond the Basic Multilingual Plane may let a row in that the code leaves out, which
-- no filter can reach).
INSERT INTO "checkpoint_metadata" ("cp_user", "key", "value", "cp_seq")
SELECT c."user_id", m.key, m.value::text, c."seq"
FROM "checkpoints" c
CROSS JOIN LATERAL json_each(CASE WHEN json_typeof(c."metadata"::json) = 'object' THEN c."metadata"::json ELSE '{}'::json END) AS m(key, value)
WHERE c."metadata" IS NOT NULL
  AND json_typeof(m.value) NOT IN ('object', 'array')
  AND char_length(m.key) <= 256 AND char_length(m.value::text) <= 256
ON CONFLICT DO NOTHING;
