SELECT count(*) FROM (
        (SELECT 1 FROM tasks WHERE search @@ to_tsquery('english', :query) LIMIT 1001)
        UNION ALL
        (SELECT 1 FROM notes WHERE search @@ to_tsquery('english', :query) LIMIT 1001)
    ) AS capped;
WITH m AS (
    (SELECT 'task' AS kind, t.id, t.title, t.description AS body, t.seq * 2 AS ord, t.search
       FROM tasks t WHERE t.search @@ to_tsquery('english', :query)
      ORDER BY t.seq DESC LIMIT 500)
    UNION ALL
    (SELECT 'note', n.id, n.title, n.content, n.seq * 2 + 1, n.search
       FROM notes n WHERE n.search @@ to_tsquery('english', :query)
      ORDER BY n.seq DESC LIMIT 500)),
 w AS (SELECT m.*, row_number() OVER (ORDER BY ord DESC) - 1 AS pos FROM m),
 p AS (SELECT kind, id, title, body, ord, pos / 500 AS win,
              ts_rank('{0.25, 0.25, 0.25, 1.0}', search, to_tsquery('english', :query), 1) AS score
         FROM w WHERE pos >= 0 AND pos < 500
        ORDER BY win, score DESC, ord LIMIT 20 OFFSET 0)
 SELECT kind, id, title,
        ts_headline('english', title || E'\n' || body, to_tsquery('english', :query),
                    'StartSel=<mark>, StopSel=</mark>, MaxWords=16, MinWords=6, MaxFragments=1, FragmentDelimiter=…'),
        score::float8
   FROM p ORDER BY win, score DESC, ord;
