# Production image: gunicorn serves the site (static files by whitenoise); the same image runs
# the Celery worker with a different command (see README.md).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

COPY requirements.txt .
RUN pip install -r requirements.txt

COPY . .
RUN SECRET_KEY=build-only python manage.py collectstatic --noinput \
    && useradd --create-home evalsite && mkdir -p /app/var && chown -R evalsite /app/var
USER evalsite

EXPOSE 8000
CMD ["sh", "-c", "python manage.py migrate --noinput && gunicorn evalsite.wsgi:application --bind 0.0.0.0:8000 --workers ${WEB_CONCURRENCY:-3} --access-logfile -"]
