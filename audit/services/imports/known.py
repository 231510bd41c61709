"""The runs and users an import looks up by name, each once per import; unknown auditors
are created inactive."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User

from audit.models import ExtractionRun
from audit.services.runs import run_for_import, run_info_key, run_latest_or_register
from evalsite.access import ensure_role_groups


def username(identifier: str | None) -> str:
    return (identifier or IMPORT_USER).strip()[:150]


def _user(name: str) -> User:
    """The user an exported auditor/approver name refers to, created inactive if unknown."""
    user = get_user_model().objects.filter(username=name).first()
    if user is None:
        user = get_user_model().objects.create(
            username=name, email=name if "@" in name else "", is_active=False
        )
        user.set_unusable_password()
        user.save(update_fields=["password"])
        auditor_group, _ = ensure_role_groups()
        user.groups.add(auditor_group)
    return user


@dataclass
class Known:
    """The runs and users an import has looked up, by name: each is read once per import, not
    once per statement. A run is registered when its first extraction is imported (an import
    that brings no extraction registers none)."""

    default_run: tuple[str, str]
    run_info: dict[str, Any] | None = None
    by: User | None = None
    runs: dict[str, ExtractionRun] = field(default_factory=dict)
    users: dict[str, User] = field(default_factory=dict)
    users_looked_up: set[str] = field(default_factory=set)  # found in ``users`` or not
    # Discussions given statements since their queue figures were last counted.
    figures_due: set[int] = field(default_factory=set)

    def run_for(self, statement: dict) -> ExtractionRun:
        """The run of a statement's (or a discussion's) ``extraction_run``, else the run the
        import was given (``run_info``): one registration per distinct description in the
        import (runs.run_for_import). Without either, the default run of old: the latest
        replicate of its model and prompt version."""
        info = statement.get("extraction_run")
        if not isinstance(info, dict) or not (info.get("model_name") or info.get("external_id")):
            info = self.run_info
        key = "default" if info is None else run_info_key(info)
        if key not in self.runs:
            self.runs[key] = (
                run_for_import(info, by=self.by)
                if info is not None
                else run_latest_or_register(
                    model_name=self.default_run[0], prompt_version=self.default_run[1], by=self.by
                )
            )
        return self.runs[key]

    def users_read(self, names: set[str]) -> None:
        """Read these users in one query (a name no user has is created when it is needed)."""
        missing = names - self.users_looked_up
        if missing:
            for user in get_user_model().objects.filter(username__in=missing):
                self.users[user.username] = user
            self.users_looked_up |= missing

    def user(self, name: str) -> User:
        if name not in self.users:
            self.users[name] = _user(name)
        return self.users[name]


IMPORT_USER = "imported"
