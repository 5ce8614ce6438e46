WITH q AS MATERIALIZED (SELECT to_tsquery('english', :query) AS q),
         wanted AS MATERIALIZED (SELECT greatest(:cap1::bigint, :hi::bigint) AS n),
         tasks_walk AS MATERIALIZED (
             SELECT coalesce(hits * hits * newest >= (SELECT n FROM wanted) * 200 * 200 / 2, false) AS walk
               FROM (SELECT count(*) AS hits
                       FROM (SELECT search FROM tasks ORDER BY seq DESC LIMIT 200) AS recent
                      WHERE ts_match_vq(recent.search, (SELECT q FROM q))) AS probe,
                    (SELECT max(seq) AS newest FROM tasks) AS size),
         tasks_newest AS MATERIALIZED (
             (SELECT seq, ts_rank('{0.25, 0.25, 0.25, 1.0}', search, (SELECT q FROM q), 1) AS score, NULL::bigint AS rn FROM tasks
               WHERE (SELECT walk FROM tasks_walk) AND ts_match_vq(search, (SELECT q FROM q))
               ORDER BY seq DESC LIMIT (SELECT :hi::bigint))
             UNION ALL
             (SELECT seq,
                     CASE WHEN row_number() OVER (ORDER BY seq + 0 DESC) <= (SELECT :hi::bigint)
                          THEN ts_rank('{0.25, 0.25, 0.25, 1.0}', search, (SELECT q FROM q), 1) END,
                     row_number() OVER (ORDER BY seq + 0 DESC) FROM tasks
               WHERE NOT (SELECT walk FROM tasks_walk) AND search @@ (SELECT q FROM q)
               ORDER BY seq + 0 DESC LIMIT (SELECT n FROM wanted))),
         notes_walk AS MATERIALIZED (
             SELECT coalesce(hits * hits * newest >= (SELECT n FROM wanted) * 200 * 200 / 2, false) AS walk
               FROM (SELECT count(*) AS hits
                       FROM (SELECT search FROM notes ORDER BY seq DESC LIMIT 200) AS recent
                      WHERE ts_match_vq(recent.search, (SELECT q FROM q))) AS probe,
                    (SELECT max(seq) AS newest FROM notes) AS size),
         notes_newest AS MATERIALIZED (
             (SELECT seq, ts_rank('{0.25, 0.25, 0.25, 1.0}', search, (SELECT q FROM q), 1) AS score, NULL::bigint AS rn FROM notes
               WHERE (SELECT walk FROM notes_walk) AND ts_match_vq(search, (SELECT q FROM q))
               ORDER BY seq DESC LIMIT (SELECT :hi::bigint))
             UNION ALL
             (SELECT seq,
                     CASE WHEN row_number() OVER (ORDER BY seq + 0 DESC) <= (SELECT :hi::bigint)
                          THEN ts_rank('{0.25, 0.25, 0.25, 1.0}', search, (SELECT q FROM q), 1) END,
                     row_number() OVER (ORDER BY seq + 0 DESC) FROM notes
               WHERE NOT (SELECT walk FROM notes_walk) AND search @@ (SELECT q FROM q)
               ORDER BY seq + 0 DESC LIMIT (SELECT n FROM wanted))),
         read AS MATERIALIZED (
             SELECT (SELECT count(*) FROM tasks_newest) + (SELECT count(*) FROM notes_newest) AS n),
         tasks_more AS MATERIALIZED (
             SELECT count(*) AS n FROM (
                 SELECT 1 FROM tasks
                  WHERE (SELECT walk FROM tasks_walk)
                    AND (SELECT count(*) FROM tasks_newest) = (SELECT :hi::bigint)
                    AND seq < (SELECT min(seq) FROM tasks_newest)
                    AND ts_match_vq(search, (SELECT q FROM q))
                  ORDER BY seq DESC LIMIT (SELECT greatest(0, :cap1::bigint - n) FROM read)) AS older),
         notes_more AS MATERIALIZED (
             SELECT count(*) AS n FROM (
                 SELECT 1 FROM notes
                  WHERE (SELECT walk FROM notes_walk)
                    AND (SELECT count(*) FROM notes_newest) = (SELECT :hi::bigint)
                    AND seq < (SELECT min(seq) FROM notes_newest)
                    AND ts_match_vq(search, (SELECT q FROM q))
                  ORDER BY seq DESC LIMIT (SELECT greatest(0, :cap1::bigint - read.n - tasks_more.n) FROM read, tasks_more)) AS older),
         m AS (SELECT 'task' AS kind, seq, seq * 2 AS ord, score FROM tasks_newest
                WHERE rn IS NULL OR rn <= (SELECT :hi::bigint)
               UNION ALL
               SELECT 'note', seq, seq * 2 + 1, score FROM notes_newest
                WHERE rn IS NULL OR rn <= (SELECT :hi::bigint)),
         w AS (SELECT m.*, row_number() OVER (ORDER BY ord DESC) - 1 AS pos FROM m),
         p AS (SELECT kind, seq, ord, pos / 500 AS win, score
                 FROM w WHERE pos >= (SELECT :lo::bigint) AND pos < (SELECT :hi::bigint)
                ORDER BY win, score DESC, ord LIMIT (SELECT :lim::bigint) OFFSET (SELECT :skip::bigint))
         SELECT p.kind, coalesce(t.id, n.id), coalesce(t.title, n.title),
                ts_headline('english',
                            CASE p.kind WHEN 'task' THEN t.title || E'\n' || t.description
                                        ELSE n.title || E'\n' || n.content END,
                            (SELECT q FROM q),
                            'StartSel=<mark>, StopSel=</mark>, MaxWords=16, MinWords=6, MaxFragments=1, FragmentDelimiter=…'),
                p.score::float8,
                (SELECT n FROM read) + (SELECT n FROM tasks_more) + (SELECT n FROM notes_more)
           FROM (SELECT) AS one
           LEFT JOIN p ON true
           LEFT JOIN tasks t ON p.kind = 'task' AND t.seq = p.seq
           LEFT JOIN notes n ON p.kind = 'note' AND n.seq = p.seq
          ORDER BY p.win, p.score DESC, p.ord;
