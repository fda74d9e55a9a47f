-- 1: tournaments, the bot versions they were created with, their matches and events
CREATE TABLE tournaments (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at REAL NOT NULL,
    settings TEXT NOT NULL              -- JSON: everything that rebuilds the schedule
);
CREATE TABLE bots (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    folder TEXT NOT NULL,
    manifest TEXT NOT NULL,             -- JSON of bot.toml as read
    content_hash TEXT NOT NULL,         -- SHA-256 of the bot folder
    UNIQUE (name, content_hash)
);
CREATE TABLE tournament_bots (
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    position INTEGER NOT NULL,
    bot_id INTEGER NOT NULL REFERENCES bots(id),
    PRIMARY KEY (tournament_id, position)
);
CREATE TABLE matches (
    id INTEGER PRIMARY KEY,
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    key TEXT NOT NULL,                  -- the schedule's key of this match
    sample TEXT NOT NULL,               -- matches of one duplicate set share it
    match_uid TEXT NOT NULL,            -- the referee's match id
    bots TEXT NOT NULL,                 -- JSON: bot name per seat
    seed INTEGER NOT NULL,
    ruleset TEXT NOT NULL,
    options TEXT NOT NULL,              -- JSON
    status TEXT NOT NULL,
    ranking TEXT NOT NULL,              -- JSON: groups of tied seats, best first
    termination TEXT NOT NULL,
    verdicts TEXT NOT NULL,             -- JSON
    stats TEXT NOT NULL,                -- JSON: per-seat timing
    started_at REAL NOT NULL,
    duration_s REAL NOT NULL,
    turns INTEGER NOT NULL,
    UNIQUE (tournament_id, key)
);
CREATE TABLE match_events (
    match_id INTEGER PRIMARY KEY REFERENCES matches(id),
    encoding TEXT NOT NULL,             -- "json-zlib": zlib of a JSON list of event tuples
    data BLOB NOT NULL
);
