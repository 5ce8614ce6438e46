(SELECT id, title, description, tags, priority, status, claim_holder, claim_expires_at, version, created_at, updated_at, 0 AS col, NULL::bigint AS n FROM tasks
                   WHERE status = 'open' AND (claim_expires_at IS NULL OR claim_expires_at <= (SELECT :now::timestamptz))
                     AND (updated_at, id) < ((SELECT coalesce(:after_at::timestamptz, 'infinity')),
                                             (SELECT coalesce(:after_id::text, '')))
                   ORDER BY updated_at DESC, id DESC LIMIT (SELECT :rows::bigint))
                 UNION ALL
                 SELECT NULL::text, NULL::text, NULL::text, NULL::text[], NULL::text, NULL::text, NULL::text, NULL::timestamptz, NULL::bigint, NULL::timestamptz, NULL::timestamptz, 0, count(*)
                   FROM (SELECT 1 FROM tasks WHERE status = 'open' AND (claim_expires_at IS NULL OR claim_expires_at <= (SELECT :now::timestamptz)) LIMIT (SELECT :counted::bigint)) AS capped
 UNION ALL
(SELECT id, title, description, tags, priority, status, claim_holder, claim_expires_at, version, created_at, updated_at, 1 AS col, NULL::bigint AS n FROM tasks
                   WHERE status = 'open' AND claim_expires_at > (SELECT :now::timestamptz)
                     AND (updated_at, id) < ((SELECT coalesce(:after_at::timestamptz, 'infinity')),
                                             (SELECT coalesce(:after_id::text, '')))
                   ORDER BY updated_at DESC, id DESC LIMIT (SELECT :rows::bigint))
                 UNION ALL
                 SELECT NULL::text, NULL::text, NULL::text, NULL::text[], NULL::text, NULL::text, NULL::text, NULL::timestamptz, NULL::bigint, NULL::timestamptz, NULL::timestamptz, 1, count(*)
                   FROM (SELECT 1 FROM tasks WHERE status = 'open' AND claim_expires_at > (SELECT :now::timestamptz) LIMIT (SELECT :counted::bigint)) AS capped
 UNION ALL
(SELECT id, title, description, tags, priority, status, claim_holder, claim_expires_at, version, created_at, updated_at, 2 AS col, NULL::bigint AS n FROM tasks
                   WHERE status = 'done'
                     AND (updated_at, id) < ((SELECT coalesce(:after_at::timestamptz, 'infinity')),
                                             (SELECT coalesce(:after_id::text, '')))
                   ORDER BY updated_at DESC, id DESC LIMIT (SELECT :rows::bigint))
                 UNION ALL
                 SELECT NULL::text, NULL::text, NULL::text, NULL::text[], NULL::text, NULL::text, NULL::text, NULL::timestamptz, NULL::bigint, NULL::timestamptz, NULL::timestamptz, 2, count(*)
                   FROM (SELECT 1 FROM tasks WHERE status = 'done' LIMIT (SELECT :counted::bigint)) AS capped
 UNION ALL
(SELECT id, title, description, tags, priority, status, claim_holder, claim_expires_at, version, created_at, updated_at, 3 AS col, NULL::bigint AS n FROM tasks
                   WHERE status = 'cancelled'
                     AND (updated_at, id) < ((SELECT coalesce(:after_at::timestamptz, 'infinity')),
                                             (SELECT coalesce(:after_id::text, '')))
                   ORDER BY updated_at DESC, id DESC LIMIT (SELECT :rows::bigint))
                 UNION ALL
                 SELECT NULL::text, NULL::text, NULL::text, NULL::text[], NULL::text, NULL::text, NULL::text, NULL::timestamptz, NULL::bigint, NULL::timestamptz, NULL::timestamptz, 3, count(*)
                   FROM (SELECT 1 FROM tasks WHERE status = 'cancelled' LIMIT (SELECT :counted::bigint)) AS capped;
