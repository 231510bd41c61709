"""REST API v1 of adjudication: a statement's codings aligned item by item, the reviewer's
choices, re-merge, and the merged coding produced for approval. Admins only: the view shows
every coder's answers side by side."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from audit.models import Speaker, Statement
from audit.services.adjudication_state import (
    adjudication_body,
    adjudication_choice_set,
    adjudication_reset,
    adjudication_state,
    adjudication_submit,
)
from evalsite.access import ADMIN_ONLY
from evalsite.api import ApiRequest, ApiView, StrictInputSerializer


class AdjudicationItemSerializer(serializers.Serializer):
    key = serializers.CharField(help_text='"<kind>:<coder index>:<item id>", or "delete".')
    kind = serializers.CharField(help_text="people, events, pair_bonds or delete.")
    unanimous = serializers.BooleanField(help_text="Every coder has it with the same content.")
    versions = serializers.ListField(
        child=serializers.JSONField(allow_null=True),
        help_text="Each coder's version in the merged ids, in coder order; null: left out.",
    )
    choice = serializers.JSONField(allow_null=True, help_text="The reviewer's choice, if any.")


class AdjudicationCoderSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    auditor = serializers.CharField()
    feedback = serializers.IntegerField()


class AdjudicationResetSerializer(serializers.Serializer):
    key = serializers.CharField(help_text="The item the choice was about (a key of then).")
    choice = serializers.JSONField(help_text="What the reviewer had chosen.")
    reason = serializers.CharField(help_text="Why it no longer applies (who changed what).")
    at = serializers.CharField(help_text="When it was reset (ISO 8601).")


class AdjudicationOutputSerializer(serializers.Serializer):
    statement = serializers.IntegerField()
    coders = AdjudicationCoderSerializer(many=True)
    unanimous_items = serializers.IntegerField()
    disputed_items = serializers.IntegerField()
    unresolved = serializers.ListField(child=serializers.CharField())
    reset_choices = AdjudicationResetSerializer(
        many=True,
        help_text="Earlier choices that no longer apply because a coder changed their coding "
        "since (also in the audit log, `adjud_reset`); kept until re-merge or submit.",
    )
    items = AdjudicationItemSerializer(many=True)
    merged = serializers.JSONField(help_text="The merge as it stands (undecided items left out).")
    feedback = serializers.IntegerField(allow_null=True, help_text="The produced coding, if any.")
    feedback_status = serializers.CharField(allow_null=True)
    feedback_version = serializers.IntegerField(allow_null=True)


class AdjudicationChoiceInputSerializer(StrictInputSerializer):
    key = serializers.CharField(help_text="The disputed item's key (from items[].key).")
    coder = serializers.IntegerField(
        required=False, min_value=0, help_text="Take this coder's version (0-based index)."
    )
    edit = serializers.JSONField(
        required=False, help_text="Or: the item as edited (its id is kept)."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("coder" in attrs) == ("edit" in attrs):
            raise serializers.ValidationError({"coder": ["give exactly one of coder or edit"]})
        return attrs


def _statement(pk: int) -> Statement:
    return get_object_or_404(
        Statement.objects.select_related("discussion"), pk=pk, speaker__type=Speaker.Type.SUBJECT
    )


class AdjudicationApi(ApiView):
    permission_classes = ADMIN_ONLY

    @extend_schema(
        operation_id="adjudication_retrieve",
        responses=AdjudicationOutputSerializer,
        description=(
            "A statement's submitted codings aligned item by item with the F1 matcher: unanimous "
            "items (merged automatically), disputed ones with every coder's version, the "
            "reviewer's choices and the merge so far. Roles: admins."
        ),
    )
    def get(self, request: ApiRequest, pk: int) -> Response:
        return Response(adjudication_body(adjudication_state(statement=_statement(pk))))


class AdjudicationChoiceApi(ApiView):
    permission_classes = ADMIN_ONLY

    @extend_schema(
        operation_id="adjudication_choose",
        request=AdjudicationChoiceInputSerializer,
        responses=AdjudicationOutputSerializer,
        description=(
            "Decide one disputed item: `coder` takes that coder's version (a coder who left the "
            "item out: leave it out), `edit` an edited item. 404 for an unknown key, 409 for a "
            "unanimous item. Roles: admins who did not code the statement."
        ),
    )
    def post(self, request: ApiRequest, pk: int) -> Response:
        statement = _statement(pk)
        serializer = AdjudicationChoiceInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        choice = {"coder": data["coder"]} if "coder" in data else {"edit": data["edit"]}
        state = adjudication_choice_set(
            statement=statement, admin=request.user, key=data["key"], choice=choice
        )
        return Response(adjudication_body(state))


class AdjudicationRemergeApi(ApiView):
    permission_classes = ADMIN_ONLY

    @extend_schema(
        operation_id="adjudication_remerge",
        request=None,
        responses=AdjudicationOutputSerializer,
        description="Re-merge: drop every choice, back to the automatic merge. Roles: admins.",
    )
    def post(self, request: ApiRequest, pk: int) -> Response:
        state = adjudication_reset(statement=_statement(pk), admin=request.user)
        return Response(adjudication_body(state))


class AdjudicationSubmitApi(ApiView):
    permission_classes = ADMIN_ONLY

    @extend_schema(
        operation_id="adjudication_submit",
        request=None,
        responses=AdjudicationOutputSerializer,
        description=(
            "Produce the merged coding as the adjudicator's submitted feedback, credited as "
            "adjudicated with every coder listed; another admin approves it (four eyes). 422 "
            "while a disputed item has no choice, or when the merge has problems. Roles: admins."
        ),
    )
    def post(self, request: ApiRequest, pk: int) -> Response:
        state = adjudication_submit(statement=_statement(pk), admin=request.user)
        return Response(adjudication_body(state))
