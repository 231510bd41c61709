"""The Celery application. Broker: Redis when REDIS_URL is set, else an embedded filesystem queue.

Workers outlive the broker: they reconnect with backoff forever (settings), every worker also
serves the sweep queue, and each (re)connection queues one sweep so that results left stale
during an outage are computed as soon as the broker is back (docs/operations.md, "Faults").
"""

import logging
import os
import warnings

from celery import Celery, bootsteps
from celery.exceptions import SecurityWarning
from celery.signals import beat_init, celeryd_after_setup, celeryd_init, task_postrun

from evalsite.env import env_bool

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")

if env_bool("DEBUG", False):
    # `make run` inside a container runs as root: Celery's warning about that repeats for every
    # worker and is nothing a developer can act on there. Production (DEBUG off) keeps it.
    warnings.filterwarnings("ignore", category=SecurityWarning)

app = Celery("evalsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

log = logging.getLogger(__name__)


@celeryd_init.connect
@beat_init.connect
def _wait_out_broker_outages(sender=None, **kwargs) -> None:
    """Long-running processes retry the broker forever; web requests keep failing fast."""
    from django.conf import settings

    options = getattr(settings, "WORKER_BROKER_TRANSPORT_OPTIONS", None)
    if options is not None:
        app.conf.broker_transport_options = dict(options)
        _survive_unacked_restore_on_lost_connection()


def _survive_unacked_restore_on_lost_connection() -> None:
    """kombu's Redis transport, closing a channel whose connection was just lost with a task
    not yet acknowledged, tries to give that message back over the dead connection and raises
    AttributeError, which the worker treats as unrecoverable and exits. Skip the give-back
    instead: the message stays in the broker's unacked set and is delivered again after the
    visibility timeout (and the sweep redoes the work meanwhile)."""
    from kombu.transport import redis as kombu_redis

    original = kombu_redis.QoS.restore_unacked_once
    if getattr(original, "survives_lost_connection", False):
        return

    def restore_unacked_once(self, stderr=None):
        try:
            return original(self, stderr)
        except AttributeError as exc:
            log.warning(
                "broker connection lost: unacknowledged messages left to redeliver (%s)", exc
            )

    restore_unacked_once.survives_lost_connection = True  # type: ignore[attr-defined]
    kombu_redis.QoS.restore_unacked_once = restore_unacked_once  # type: ignore[method-assign]


@celeryd_after_setup.connect
def _serve_sweep_queue(sender, instance, **kwargs) -> None:
    """Whatever queues a worker was started with, it also serves the sweep queue."""
    from django.conf import settings

    instance.app.amqp.queues.select_add(settings.SWEEP_QUEUE)


@task_postrun.connect
def _release_memory(sender=None, **kwargs) -> None:
    """After each task a worker ran: Django's query log (kept with DEBUG on) is emptied, as a
    web request's start empties it; after a slow-queue task, the memory its whole-run
    computation freed is given back too (evalsite/memory.py), so that one worker serving
    many runs peaks like a fresh one."""
    if sender is None or getattr(sender.request, "is_eager", False):
        return  # in-process (eager): the caller's own memory, not a worker's
    # Imported here: this module loads with the settings, before Django is set up.
    from django.db import reset_queries

    from evalsite.memory import memory_release, releases_after

    if releases_after(sender.name):
        memory_release()
    else:
        reset_queries()


class SweepAfterConnect(bootsteps.StartStopStep):
    """Runs each time the worker's consumer (re)connects to the broker: queue one sweep that
    ignores the sweep grace, since tasks published during an outage were lost."""

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def start(self, c) -> None:
        from django.conf import settings

        try:
            c.app.send_task(
                "metrics.tasks.recompute_stale",
                kwargs={"after_outage": True},
                queue=settings.SWEEP_QUEUE,
            )
        except Exception as exc:  # the periodic sweep still comes
            log.warning("could not queue the sweep after connecting: %s", exc)


app.steps["consumer"].add(SweepAfterConnect)
