from django.http import HttpRequest

from evalsite.access import is_admin, is_auditor


def roles(request: HttpRequest) -> dict:
    user = getattr(request, "user", None)
    if user is None:
        return {"is_admin": False, "is_auditor": False}
    return {"is_admin": is_admin(user), "is_auditor": is_auditor(user)}
