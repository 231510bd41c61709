from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from audit.services.api_support import api_token_allowed, api_token_get_or_create


class Command(BaseCommand):
    help = "Print USERNAME's API token (created if missing) for `Authorization: Token <key>`."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument(
            "--regenerate",
            action="store_true",
            help="replace the token (the old key stops working)",
        )

    def handle(self, *args, username: str, regenerate: bool, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user {username!r}.")
        if not api_token_allowed(user=user):
            raise CommandError(
                f"{username!r} is inactive or in no role group (auditor/admin): "
                "a token would only get 403s."
            )
        token = api_token_get_or_create(user=user, regenerate=regenerate)
        self.stdout.write(token.key)
