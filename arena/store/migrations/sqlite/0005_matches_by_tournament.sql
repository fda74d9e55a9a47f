-- 5: a tournament's matches read in the order stored, a page at a time, from an index
-- (a ladder's hundreds of thousands: each page sorted all of them before)
CREATE INDEX matches_by_tournament ON matches (tournament_id, id);
