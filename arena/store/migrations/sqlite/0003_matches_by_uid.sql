-- 3: spectators open a match by the id the referee gave it
CREATE INDEX matches_by_uid ON matches (match_uid);
