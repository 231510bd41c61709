"""Everything that exists only for speed, each piece kept because a benchmark shows it buys a
user-visible figure at least 10% (docs/performance.md, "Speed machinery: kept or removed",
gives each piece's figures with and without it). Remove a piece here, and the site works the
same, slower.

- ``bulk``: new rows written with COPY (``rows_insert``, ``values_insert``; an import's
  writes), on PostgreSQL.
- ``collector``: Python's cyclic garbage collector paused while many statements are scored
  (a recompute's batches, a run's statement F1 on request).
- ``digest_cache``: figures derived from stored contents kept in the cache under a digest of
  those contents (the review pages' why-to-adjudicate counts, which run the matcher).
- ``editor_options``: the editor's fields and long choice lists written in Python, not as
  template loops and partials (the editor far down a long discussion); and its people written
  once per editor, not in every person picker and checklist, which person-picker.js and
  editor-big.js fill when opened (what the browser builds for a big statement).
- ``item_cards``: a payload's item cards written in Python, not a partial per card (the
  statement and audit pages).
- ``table_rows``: the long tables' rows and cells written in Python, not as template loops of
  ``url`` tags and number filters (the run comparison, the statements behind an error count).
- ``timestamps``: timestamps parsed by psycopg's compiled loader, not Django's Python one
  (review triage's update after an approval, which reads every stamp of the run).
- ``planner``: the planner's statistics refreshed right after a bulk write, not when autovacuum
  comes (every page and the background work after an import or a recompute).
"""
