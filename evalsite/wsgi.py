import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
application = get_wsgi_application()

from evalsite.memory import heap_freeze_as_served  # noqa: E402 (needs the settings)

heap_freeze_as_served()
