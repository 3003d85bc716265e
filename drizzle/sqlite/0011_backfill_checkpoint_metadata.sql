-- Fills the metadata index for checkpoints made before it existed, as the store writes it for new ones (indexedMetadata):
-- one row per top-level scalar, its value as the JSON text stored in the checkpoint's metadata (`->` returns that text
-- as written, so numbers keep JavaScript's spelling). Keys and values over 256 characters are left out (counted in code
-- points: one beyond the Basic Multilingual Plane may let a row in that the code leaves out, which no filter can reach).
INSERT OR IGNORE INTO `checkpoint_metadata` (`cp_user`, `key`, `value`, `cp_seq`)
SELECT c.`user_id`, j.`key`, c.`metadata` -> j.`fullkey`, c.`seq`
FROM `checkpoints` c, json_each(c.`metadata`) j
WHERE c.`metadata` IS NOT NULL AND json_valid(c.`metadata`) AND json_type(c.`metadata`) = 'object'
  AND j.`type` NOT IN ('object', 'array')
  AND length(j.`key`) <= 256 AND length(c.`metadata` -> j.`fullkey`) <= 256;
