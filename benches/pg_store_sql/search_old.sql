SELECT count(*) FROM (SELECT 1 FROM (
    WITH q AS (SELECT to_tsquery('english', :query) AS q)
    SELECT 'task' AS kind, t.id, t.title, t.description AS body, t.seq * 2 AS ord,
           ts_rank('{0.25, 0.25, 0.25, 1.0}', t.search, q.q, 1) AS score
      FROM tasks t, q WHERE t.search @@ q.q
    UNION ALL
    SELECT 'note', n.id, n.title, n.content, n.seq * 2 + 1,
           ts_rank('{0.25, 0.25, 0.25, 1.0}', n.search, q.q, 1)
      FROM notes n, q WHERE n.search @@ q.q) m LIMIT 1001) AS capped;
SELECT p.kind, p.id, p.title,
       ts_headline('english', p.title || E'\n' || p.body, to_tsquery('english', :query),
                   'StartSel=<mark>, StopSel=</mark>, MaxWords=16, MinWords=6, MaxFragments=1, FragmentDelimiter=…'),
       p.score::float8
FROM (    WITH q AS (SELECT to_tsquery('english', :query) AS q)
    SELECT 'task' AS kind, t.id, t.title, t.description AS body, t.seq * 2 AS ord,
           ts_rank('{0.25, 0.25, 0.25, 1.0}', t.search, q.q, 1) AS score
      FROM tasks t, q WHERE t.search @@ q.q
    UNION ALL
    SELECT 'note', n.id, n.title, n.content, n.seq * 2 + 1,
           ts_rank('{0.25, 0.25, 0.25, 1.0}', n.search, q.q, 1)
      FROM notes n, q WHERE n.search @@ q.q ORDER BY score DESC, ord LIMIT 20 OFFSET 0) p
ORDER BY p.score DESC, p.ord;
