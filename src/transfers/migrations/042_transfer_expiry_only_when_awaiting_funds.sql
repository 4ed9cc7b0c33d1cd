-- A transfer funded from the balance at confirm waits for no money, so it has no funding deadline:
-- expires_at is null for it (D20: a transfer expires when it is unfunded at expires_at).
ALTER TABLE transfers ALTER COLUMN expires_at DROP NOT NULL;
UPDATE transfers SET expires_at = NULL WHERE funding_method = 'balance';
