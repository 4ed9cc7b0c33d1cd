-- The pending payouts of one beneficiary, which a review of its screening hands off again (D18, D21).
CREATE INDEX IF NOT EXISTS payouts_pending_beneficiary_idx ON payouts (beneficiary_id) WHERE status = 'pending';
