-- D1 migration 0003: the index of the per-IP thread-message rate (100
-- later messages per IP per hour, counted in the INSERT that writes one).
CREATE INDEX IF NOT EXISTS messages_later_ip ON messages (ip_hash, created_at) WHERE role = 'later';
