-- 4: a server tournament cancelled by its organiser (when, as a Unix time) is not
-- resumed when the server starts again; following it by name plays what is left
ALTER TABLE tournaments ADD COLUMN cancelled_at DOUBLE PRECISION;
