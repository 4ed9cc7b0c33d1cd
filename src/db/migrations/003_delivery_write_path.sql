-- The delivery engine's write path (issue 6): every delivery inserts one attempt, and each index of
-- webhook_delivery_attempts is one more entry (and WAL record) per delivery. Two indexes did no work that
-- another could not do:
-- - (organisation_id, event_id, id) served the webhook_event_ids filter, which the unique
--   (event_id, subscription_id, attempt_number) index serves as well: a handful of rows per event, then the
--   organisation check and the page's sort on those rows.
-- - (delivery_id, attempt_number) served only the engine's look-up of a delivery's attempt waiting for its
--   retry; a partial index holds just those (an attempt leaves it when it settles), so the attempts of
--   successful deliveries never enter it.
DROP INDEX webhook_attempts_org_event_idx;
DROP INDEX webhook_attempts_delivery_idx;
CREATE INDEX webhook_attempts_pending_retry_idx ON webhook_delivery_attempts (delivery_id)
  WHERE status = 'pending_retry';
