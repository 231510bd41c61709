# Production image: gunicorn serves the site (static files by whitenoise); the same image runs
# the Celery workers and beat with a different command (see docs/operations.md).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

COPY requirements.txt .
RUN pip install -r requirements.txt

COPY . .
RUN SECRET_KEY=build-only-key-for-collectstatic-never-signs-anything-0123456789 python manage.py collectstatic --noinput \
    && useradd --create-home evalsite && mkdir -p /app/var && chown -R evalsite /app/var
USER evalsite

EXPOSE 8000
# Processes, threads, worker class and timeout come from the environment: see gunicorn.conf.py
# (WEB_CONCURRENCY, WEB_THREADS, WEB_WORKER_CLASS, WEB_TIMEOUT).
CMD ["sh", "-c", "python manage.py migrate --noinput && gunicorn evalsite.wsgi:application --config gunicorn.conf.py"]
