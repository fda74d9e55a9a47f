-- 6: a tournament's state as of one of its matches (a ladder's snapshot: its ratings,
-- pairings and standings' counts as of the match stored last), so that a server takes
-- up its ladder from there and reads only the matches stored since, not every one
CREATE TABLE tournament_states (
    tournament_id INTEGER PRIMARY KEY REFERENCES tournaments(id),
    through INTEGER NOT NULL,           -- the id of the last match it counts
    encoding TEXT NOT NULL,             -- "json-zlib": zlib of a JSON object
    data BLOB NOT NULL,
    saved_at REAL NOT NULL
);
