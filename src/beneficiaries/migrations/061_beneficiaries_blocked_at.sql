-- When a sanctions review confirmed the beneficiary's current name as a match (D18, D19). Such a
-- beneficiary is never paid again, also once deleted: a delete changes its status, not this.
ALTER TABLE beneficiaries ADD COLUMN blocked_at timestamptz;
UPDATE beneficiaries b SET blocked_at = coalesce(s.reviewed_at, b.updated_at)
  FROM sanctions_screenings s
 WHERE s.id = b.screening_id AND s.match_status = 'confirmed_match';
