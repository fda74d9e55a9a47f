-- 1: tournaments, the bot versions they were created with, their matches and events.
-- The schema of sqlite/0001 in PostgreSQL's types. JSON is kept as TEXT, as written:
-- only the arena reads it, and JSONB would reorder keys. A seed is NUMERIC(20, 0): every
-- signed and unsigned 64-bit integer fits exactly (BIGINT stops at 2^63 - 1).
CREATE TABLE tournaments (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at DOUBLE PRECISION NOT NULL,
    settings TEXT NOT NULL              -- JSON: everything that rebuilds the schedule
);
CREATE TABLE bots (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name TEXT NOT NULL,
    folder TEXT NOT NULL,
    manifest TEXT NOT NULL,             -- JSON of bot.toml as read
    content_hash TEXT NOT NULL,         -- SHA-256 of the bot folder
    UNIQUE (name, content_hash)
);
CREATE TABLE tournament_bots (
    tournament_id BIGINT NOT NULL REFERENCES tournaments(id),
    position INTEGER NOT NULL,
    bot_id BIGINT NOT NULL REFERENCES bots(id),
    PRIMARY KEY (tournament_id, position)
);
CREATE TABLE matches (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tournament_id BIGINT NOT NULL REFERENCES tournaments(id),
    key TEXT NOT NULL,                  -- the schedule's key of this match
    sample TEXT NOT NULL,               -- matches of one duplicate set share it
    match_uid TEXT NOT NULL,            -- the referee's match id
    bots TEXT NOT NULL,                 -- JSON: bot name per seat
    seed NUMERIC(20, 0) NOT NULL,
    ruleset TEXT NOT NULL,
    options TEXT NOT NULL,              -- JSON
    status TEXT NOT NULL,
    ranking TEXT NOT NULL,              -- JSON: groups of tied seats, best first
    termination TEXT NOT NULL,
    verdicts TEXT NOT NULL,             -- JSON
    stats TEXT NOT NULL,                -- JSON: per-seat timing
    started_at DOUBLE PRECISION NOT NULL,
    duration_s DOUBLE PRECISION NOT NULL,
    turns INTEGER NOT NULL,
    UNIQUE (tournament_id, key)
);
CREATE TABLE match_events (
    match_id BIGINT PRIMARY KEY REFERENCES matches(id),
    encoding TEXT NOT NULL,             -- "json-zlib": zlib of a JSON list of event tuples
    data BYTEA NOT NULL
);
