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

from evalsite.env import env_int, env_str

bind = f"0.0.0.0:{env_int('PORT', 8000, minimum=1)}"
workers = env_int("WEB_CONCURRENCY", 3, minimum=1)
worker_class = env_str("WEB_WORKER_CLASS", "gthread")
threads = env_int("WEB_THREADS", 4, minimum=1)
timeout = env_int("WEB_TIMEOUT", 60, minimum=1)
graceful_timeout = env_int("WEB_GRACEFUL_TIMEOUT", 30, minimum=0)
keepalive = 5
# Recycle a process now and then so memory held by one large request is given back.
max_requests = env_int("WEB_MAX_REQUESTS", 1000, minimum=0)
max_requests_jitter = 100
accesslog = "-"
# No request-line limit here: the app answers over-long /api/ query strings itself with a JSON
# 414 (MAX_QUERY_STRING_LENGTH), instead of gunicorn's HTML one.
limit_request_line = 0
