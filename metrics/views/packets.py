"""A failure packet as a download (Markdown or JSON): offered by the error analysis page for
each of its patterns (``metrics.packets`` builds it)."""

from __future__ import annotations

from django.http import HttpResponse

from audit.models import ExtractionRun
from evalsite.access import admin_required
from evalsite.http import HtmxHttpRequest
from evalsite.params import parse_id
from metrics import packets
from metrics.engine.comparison import side_of_run


@admin_required
def failure_packet(request: HtmxHttpRequest) -> HttpResponse:
    """?run=&pattern=[&n=20][&format=md|json]: the packet of one pattern of a run's errors."""
    run_id = parse_id(request.GET.get("run"), name="run", required=True)
    run = ExtractionRun.objects.select_related("configuration").filter(pk=run_id).first()
    if run is None:
        return HttpResponse("run: no such extraction run", status=404, content_type="text/plain")
    try:
        packet = packets.failure_packet(
            user=request.user,
            side=side_of_run(run),
            pattern=request.GET.get("pattern", ""),
            n=request.GET.get("n") or packets.DEFAULT_STATEMENTS,
            base_url=request.build_absolute_uri("/").rstrip("/"),
        )
    except packets.PacketInputError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    except packets.PacketNotReady as exc:
        return HttpResponse(str(exc), status=409, content_type="text/plain; charset=utf-8")
    as_json = request.GET.get("format") == "json"
    body = packets.packet_json(packet) if as_json else packets.packet_markdown(packet)
    kind = "application/json" if as_json else "text/markdown; charset=utf-8"
    response = HttpResponse(body, content_type=kind)
    name = f"packet-run-{run.pk}-{packet['pattern']['key'].replace(':', '-')}"
    response["Content-Disposition"] = f'attachment; filename="{name}.{"json" if as_json else "md"}"'
    return response
