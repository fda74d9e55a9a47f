-- 2: a server's own: its settings and the bots entered on it
CREATE TABLE server (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE registered_bots (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,                 -- the base name
    version INTEGER NOT NULL,           -- 1, 2, ...
    kind TEXT NOT NULL,                 -- remote | hosted
    token_hash TEXT UNIQUE,             -- remote: SHA-256 of its token (never the token)
    folder TEXT,                        -- hosted: where the server keeps it
    status TEXT NOT NULL,               -- active | failed | removed
    report TEXT,                        -- hosted: its check-bot report (JSON)
    created_at REAL NOT NULL,
    UNIQUE (name, version)
);
