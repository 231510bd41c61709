"""Write the failure packet of one error pattern of a run or a configuration (Markdown or
JSON): the input to the next prompt change."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from evalsite.access import is_admin
from metrics import packets
from metrics.engine import comparison as cmp


class Command(BaseCommand):
    help = (
        "Print (or write with -o) the failure packet of --pattern over --run: a run (r12 or 12) "
        "or a configuration with all its replicates (c3). Patterns: people_fn, events_fp, "
        "pair_bonds_fn (…_fn missed, …_fp spurious), events_fn:<kind>, sarf_high:<variable>, "
        "sarf_low:<variable>, sarf_wrong:<variable>, parent_links."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--run", required=True, help="r<run id>, <run id> or c<configuration id>"
        )
        parser.add_argument("--pattern", required=True)
        parser.add_argument(
            "-n", type=int, default=packets.DEFAULT_STATEMENTS, help="statements listed (20)"
        )
        parser.add_argument("--format", choices=["md", "json"], default="md")
        parser.add_argument(
            "--as", dest="username", help="an admin's username (default: the first admin)"
        )
        parser.add_argument("--base-url", default="", help="prefix of the statements' links")
        parser.add_argument("-o", "--output", type=Path, help="file to write (default stdout)")

    def handle(self, *args, run, pattern, n, format, username, base_url, output, **options):
        users = get_user_model().objects.order_by("pk")
        user = (
            users.filter(username=username).first()
            if username
            else next((u for u in users.filter(is_active=True) if is_admin(u)), None)
        )
        if user is None:
            raise CommandError("no such admin: give --as an admin's username")
        try:
            packet = packets.failure_packet(
                user=user,
                side=cmp.side_get(run, name="--run"),
                pattern=pattern,
                n=n,
                base_url=base_url.rstrip("/"),
            )
        except (cmp.ComparisonInputError, packets.PacketInputError) as exc:
            raise CommandError(str(exc)) from exc
        except (packets.PacketNotAllowed, packets.PacketNotReady) as exc:
            raise CommandError(str(exc)) from exc
        text = packets.packet_json(packet) if format == "json" else packets.packet_markdown(packet)
        if output:
            output.write_text(text, encoding="utf-8")
            self.stderr.write(f"{packet['summary']} Written to {output}.")
        else:
            self.stdout.write(text, ending="")
