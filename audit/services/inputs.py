"""The imported inputs edited by hand (the admin site): what is derived from them follows
each write here, as it follows the other services' writes."""

from __future__ import annotations

from django.db import transaction

from audit.derived.team_figures import discussion_label_store
from audit.models import Discussion


@transaction.atomic
def discussion_save(*, discussion: Discussion) -> Discussion:
    """Create or change a discussion; the team page's row shows its summary."""
    created = discussion.pk is None
    discussion.save()
    if not created:
        discussion_label_store(discussion=discussion)
    return discussion
