"""factory_boy factories for volume tests."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model

from audit.models import Discussion, Extraction, ExtractionRun, Feedback, Speaker, Statement
from audit.services.feedback.revisions import coding_follow
from audit.services.inputs import statement_save


def pdp(people=(), events=(), pair_bonds=(), delete=()) -> dict:
    return {
        "people": list(people),
        "events": list(events),
        "pair_bonds": list(pair_bonds),
        "delete": list(delete),
    }


def person(ident: int, name: str, confidence: float | None = None) -> dict:
    """A PDP person item; confidence is left out when None (as an AI may leave it out)."""
    item = {"id": ident, "name": name}
    if confidence is not None:
        item["confidence"] = confidence
    return item


SIMPLE_PDP = pdp(
    people=[
        {"id": -1, "name": "John", "last_name": "Smith", "gender": "male", "confidence": 0.9},
        {"id": -2, "name": "Mary", "last_name": "Smith", "gender": "female", "confidence": 0.8},
    ],
    events=[
        {
            "id": -3,
            "kind": "married",
            "person": -1,
            "spouse": -2,
            "description": "Married in Boston",
            "dateTime": "1985-06-01",
            "dateCertainty": "certain",
            "confidence": 0.7,
        }
    ],
    pair_bonds=[{"id": -4, "person_a": -1, "person_b": -2, "married": True, "confidence": 0.9}],
)


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")


class DiscussionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Discussion

    summary = factory.Sequence(lambda n: f"Family history conversation {n}")


class SpeakerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Speaker
        django_get_or_create = ("discussion", "name")

    discussion = factory.SubFactory(DiscussionFactory)
    name = "Subject"
    type = Speaker.Type.SUBJECT


class StatementFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Statement

    discussion = factory.SubFactory(DiscussionFactory)
    speaker = factory.LazyAttribute(lambda o: SpeakerFactory(discussion=o.discussion))
    order = factory.Sequence(lambda n: n)
    text = factory.Sequence(lambda n: f"Statement number {n} about my family.")

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        """Through the service: what is still to code follows, as for one added by hand."""
        return statement_save(statement=model_class(*args, **kwargs))


class ExtractionRunFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ExtractionRun

    model_name = "gpt-test"
    prompt_version = factory.Sequence(lambda n: f"v{n}")


class ExtractionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Extraction

    statement = factory.SubFactory(StatementFactory)
    run = factory.SubFactory(ExtractionRunFactory)
    pdp_deltas = factory.LazyFunction(
        lambda: pdp(**{k: v for k, v in SIMPLE_PDP.items() if k != "delete"})
    )


class FeedbackFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Feedback

    statement = factory.SubFactory(StatementFactory)
    auditor = factory.SubFactory(UserFactory)
    edited_extraction = factory.LazyFunction(
        lambda: pdp(**{k: v for k, v in SIMPLE_PDP.items() if k != "delete"})
    )
    status = Feedback.Status.SUBMITTED

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        """Created past the services: what follows a coding written follows it too."""
        feedback = super()._create(model_class, *args, **kwargs)
        coding_follow(feedback, before=None)
        return feedback
