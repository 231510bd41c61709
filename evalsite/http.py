"""The request type views see: Django's, plus what the middleware adds (django-htmx's details
and the CSP nonce), so views are typed against what they read. Every page requires sign-in
(``evalsite.access``), so its user is a real one."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails
    csp_nonce: str
    user: User  # pages are behind sign-in
