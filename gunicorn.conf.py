"""gunicorn settings for the production image (read from the working directory by gunicorn).

Every figure comes from the environment so an operator sizes the web tier without a rebuild:
- WEB_CONCURRENCY processes (default 3). Each is a full Django process; add processes for
  more CPU, or add containers (the cache, files and queues are shared, see docs/operations.md).
- WEB_THREADS threads per process (default 4) with the ``gthread`` worker class: most requests
  wait on PostgreSQL, and the editor's presence poll or a job's progress poll must not queue
  behind a slow page in the same process. Pages compute nothing heavy (stored results), so
  threads do not fight over the GIL for long.
- WEB_TIMEOUT seconds (default 60) before a stuck request's process is replaced. Work that can
  take longer (large imports and exports, recomputes, evaluations) runs as background jobs.
"""

import os

bind = f"0.0.0.0:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", "3"))
worker_class = os.environ.get("WEB_WORKER_CLASS", "gthread")
threads = int(os.environ.get("WEB_THREADS", "4"))
timeout = int(os.environ.get("WEB_TIMEOUT", "60"))
graceful_timeout = int(os.environ.get("WEB_GRACEFUL_TIMEOUT", "30"))
keepalive = 5
# Recycle a process now and then so memory held by one large request is given back.
max_requests = int(os.environ.get("WEB_MAX_REQUESTS", "1000"))
max_requests_jitter = 100
accesslog = "-"
# No request-line limit here: the app answers over-long /api/ query strings itself with a JSON
# 414 (MAX_QUERY_STRING_LENGTH), instead of gunicorn's HTML one.
limit_request_line = 0
