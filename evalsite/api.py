"""API plumbing shared by both apps.

- ``exception_handler``: turns every domain error into a 4xx with one error format:
  ``{"detail": "...", "errors": ["path: message", ...]}`` (``errors`` on validation errors,
  ``current_version`` on a 409).
- ``ApiView``: the base of every API view (token then session auth, JSON only, stable
  pagination, one transaction per unsafe request that rolls back on any 4xx/5xx answer).
- ``JobStartedSerializer`` / ``job_started_body``: the 202 answer of every background job.
- ``add_error_responses``: a drf-spectacular post-processing hook documenting those errors.
- ``state_input_limits``: a drf-spectacular post-processing hook writing into the schema the
  limits every input shares (integer range, no NUL in text), so the schema says what is refused.
- ``to_openapi30``: JSON Schema (2020-12) → OpenAPI 3.0 schema objects, for the payload schemas.
"""

from __future__ import annotations

import copy
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponseBase, JsonResponse
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.openapi import AutoSchema
from rest_framework import exceptions, serializers, status
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import JSONParser
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from metrics.families.json_input import InputError, JsonInputError, parse_json
from metrics.families.payload.schema import PayloadError

# --- errors ------------------------------------------------------------------------------------


class DomainError(Exception):
    """A request a workflow refuses, with a message meant for the user: the API answers
    ``status_code`` (and ``current_version`` when the error carries one). The apps' refusals
    derive from it, so the plumbing needs to know none of them."""

    status_code = 400


def _flatten(detail: Any, path: str = "") -> list[str]:
    """DRF's nested error dict/list as "path: message" lines."""
    if isinstance(detail, dict):
        lines = []
        for key, value in detail.items():
            if key == "non_field_errors":
                sub = path
            elif isinstance(key, int):  # ListField errors are keyed by index
                sub = f"{path}[{key}]"
            else:
                sub = f"{path}.{key}" if path else str(key)
            lines += _flatten(value, sub)
        return lines
    if isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            return [f"{path}: {item}" if path else str(item) for item in detail]
        lines = []
        for index, item in enumerate(detail):
            if item:
                lines += _flatten(item, f"{path}[{index}]")
        return lines
    return [f"{path}: {detail}" if path else str(detail)]


class ReferenceNotFound(exceptions.NotFound):
    """A body or query field names an object that does not exist (or is not visible): 404.

    The request is well formed (the schema cannot know which ids exist), so it is not a 400.
    """

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(f"{field}: {message}")


def exception_handler(exc, context):
    if isinstance(exc, ReferenceNotFound):
        return Response({"detail": str(exc.detail), "errors": [str(exc.detail)]}, status=404)
    if isinstance(exc, PayloadError):
        detail = getattr(exc, "detail", "Invalid payload.")
        status_code = getattr(exc, "status_code", 400)  # 422: a workflow refused a payload
        return Response({"detail": detail, "errors": exc.messages()}, status=status_code)
    if isinstance(exc, InputError):
        return Response({"detail": str(exc), "errors": [str(exc)]}, status=400)
    if isinstance(exc, DomainError):
        body = {"detail": str(exc)}
        current = getattr(exc, "current_version", None)
        if current is not None:
            body["current_version"] = current
        return Response(body, status=exc.status_code)
    if isinstance(exc, RequestDataTooBig):
        return Response(
            {"detail": "Request body too large (the limit is DATA_UPLOAD_MAX_MEMORY_SIZE bytes)."},
            status=413,
        )
    if isinstance(exc, PermissionDenied):
        return Response(
            {"detail": str(exc) or "Permission denied."}, status=status.HTTP_403_FORBIDDEN
        )
    if isinstance(exc, DjangoValidationError):
        errors = [str(m) for m in exc.messages]
        return Response({"detail": "; ".join(errors), "errors": errors}, status=400)
    if isinstance(exc, exceptions.ValidationError):
        errors = _flatten(exc.detail)
        return Response(
            {"detail": "Invalid input: " + "; ".join(errors), "errors": errors}, status=400
        )
    return drf_exception_handler(exc, context)


class ErrorSerializer(serializers.Serializer):
    """The body of every 4xx answer."""

    detail = serializers.CharField()
    errors = serializers.ListField(  # type: ignore[assignment]  # a field named like DRF's property
        child=serializers.CharField(), required=False
    )
    current_version = serializers.IntegerField(
        required=False, help_text="On 409 only: the version to base a retry on."
    )


# --- strict bodies ------------------------------------------------------------------------------


class StrictInputSerializer(serializers.Serializer):
    """A request body that refuses fields it does not know, so a misspelt option is a 400
    naming it, not a silent default. The schema says so (``additionalProperties: false``)."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(str(key) for key in data if key not in self.fields)
            if unknown:
                expected = ", ".join(self.fields)
                raise exceptions.ValidationError(
                    {key: [f"unknown field; expected one of: {expected}"] for key in unknown}
                )
        return super().to_internal_value(data)


class StrictAutoSchema(AutoSchema):
    """drf-spectacular's schema, plus what DRF enforces and it leaves unsaid: strict bodies have
    ``additionalProperties: false``; a text that is trimmed and may not be blank needs a
    character other than white space."""

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        trimmed_non_blank = (
            isinstance(field, serializers.CharField)
            and field.trim_whitespace
            and not field.allow_blank
            and not isinstance(field, serializers.ChoiceField)
        )
        if direction == "request" and trimmed_non_blank and schema.get("type") == "string":
            schema.setdefault("pattern", NOT_BLANK_PATTERN)
        return schema

    def _map_basic_serializer(self, serializer, direction):
        schema = super()._map_basic_serializer(serializer, direction)
        if direction == "request" and isinstance(serializer, StrictInputSerializer):
            schema["additionalProperties"] = False
        return schema


# --- strict body fields --------------------------------------------------------------------------
# DRF coerces 5 → "5" and "5" → 5; a JSON API should refuse the wrong JSON type instead.


class StrictCharField(serializers.CharField):
    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    default_error_messages = {"invalid": "A JSON integer is required."}

    def __init__(self, **kwargs):
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", 2**63 - 1)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    default_error_messages = {"invalid": "A JSON boolean (true or false) is required."}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class CaseInsensitiveChoiceField(serializers.ChoiceField):
    """A choice given in any case ("Subject", "SUBJECT"): the schema states one spelling, the
    choices' own, and that is what the service receives."""

    def to_internal_value(self, data):
        if isinstance(data, str):
            by_folded = {str(choice).casefold(): choice for choice in self.choices}
            data = by_folded.get(data.casefold(), data)
        return super().to_internal_value(data)


class FilterTextField(serializers.CharField):
    """A text filter in the query string, matched as given: ``?family=%09`` is a tab (that
    matches nothing), not a blank refused; ``?family=`` (empty) is refused (minLength 1)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("min_length", 1)
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)


class IdField(serializers.IntegerField):
    """An id in the query string (1 .. 2**63-1)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", 2**63 - 1)
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)


# --- the base view -----------------------------------------------------------------------------


class StrictJSONParser(JSONParser):
    """JSON only, within the limits every JSON input shares (``parse_json``): no NaN, no
    overflowing numbers, no absurd nesting, no NUL characters or lone surrogates."""

    def parse(self, stream, media_type=None, parser_context=None):
        parser_context = parser_context or {}
        encoding = parser_context.get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = stream.read().decode(encoding) if stream is not None else ""
        except UnicodeDecodeError as exc:
            raise exceptions.ParseError(f"JSON parse error - not {encoding} text.") from exc
        try:
            return parse_json(text)
        except JsonInputError as exc:
            raise exceptions.ParseError(f"JSON parse error - {exc}.") from None


def _positive_int(value: str, name: str, maximum: int | None = None) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if number < 1 or (maximum is not None and number > maximum):
        upper = f" and at most {maximum}" if maximum else ""
        message = f"{name}: expected an integer of at least 1{upper}, got {value!r}"
        raise exceptions.ValidationError({name: [message.split(": ", 1)[1]]})
    return number


class StablePagination(PageNumberPagination):
    """Page-number pagination that refuses a malformed ``page``/``page_size`` (400)."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500

    def paginate_queryset(self, queryset, request, view=None):
        params = request.query_params
        for name in (self.page_query_param, self.page_size_query_param):
            if len(params.getlist(name)) > 1:
                raise exceptions.ValidationError({name: ["give this parameter once"]})
        if self.page_query_param in params:
            _positive_int(params[self.page_query_param], self.page_query_param)
        if self.page_size_query_param in params:
            _positive_int(
                params[self.page_size_query_param], self.page_size_query_param, self.max_page_size
            )
        return super().paginate_queryset(queryset, request, view)

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"]["minimum"] = 1
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"]["maximum"] = self.max_page_size
        return parameters


class ApiRequest(Request):
    """What API views see: every endpoint requires an authenticated user with a role."""

    user: User  # IsAuditor runs before any handler


class ApiView(APIView):
    """Token auth first (so anonymous scripts get 401 + WWW-Authenticate), then the session."""

    authentication_classes = [TokenAuthentication, SessionAuthentication]
    parser_classes = [StrictJSONParser]
    pagination_class = StablePagination

    def dispatch(self, request: HttpRequest, *args, **kwargs) -> HttpResponseBase:
        if request.method in SAFE_METHODS:
            return super().dispatch(request, *args, **kwargs)
        # One transaction per request; anything but success stores nothing.
        with transaction.atomic():
            response = super().dispatch(request, *args, **kwargs)
            if response.status_code >= 400:
                transaction.set_rollback(True)
        return response

    def paginated(self, queryset, serializer_class, **context) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(queryset, self.request, view=self)
        data = serializer_class(page, many=True, context={"request": self.request, **context}).data
        return paginator.get_paginated_response(data)

    def query(self, serializer_class) -> dict:
        """The validated query parameters (a 400 naming the parameter if one is wrong).

        Parameters are validated as given: ``?status=`` is an empty (invalid) status, not
        "no filter", and a parameter given twice is refused.
        """
        params = self.request.query_params
        fields = serializer_class().fields
        repeated = [name for name in fields if len(params.getlist(name)) > 1]
        if repeated:
            raise exceptions.ValidationError(
                {name: ["give this parameter once"] for name in repeated}
            )
        serializer = serializer_class(data={k: params[k] for k in fields if k in params})
        serializer.is_valid(raise_exception=True)
        return {k: v for k, v in serializer.validated_data.items() if v is not None}


# --- background jobs ---------------------------------------------------------------------------
# Long work (recompute, large imports and exports) answers 202 with where to poll.


class JobStartedSerializer(serializers.Serializer):
    job_id = serializers.IntegerField()
    status = serializers.CharField()
    url = serializers.URLField(help_text="poll this for progress")
    download_url = serializers.URLField(required=False, help_text="the file, once done")


def job_started_body(request: Request, job: Any) -> dict[str, Any]:
    """The 202 body for a started (or already running) job: its id, status and poll URL."""
    body = {
        "job_id": job.pk,
        "status": job.status,
        "url": request.build_absolute_uri(reverse("api-job-detail", args=[job.pk])),
    }
    if job.kind == job.Kind.EXPORT:
        body["download_url"] = request.build_absolute_uri(
            reverse("api-job-download", args=[job.pk])
        )
    return body


@csrf_exempt  # it changes nothing; a CSRF failure would answer an HTML page
def api_not_found(request: HttpRequest, *args, **kwargs) -> JsonResponse:
    """Any /api/ path no route matches (e.g. a non-integer id): a JSON 404, not the HTML page."""
    return JsonResponse({"detail": f"No API endpoint at {request.path}."}, status=404)


# --- OpenAPI -----------------------------------------------------------------------------------

_ERROR_REF = {"$ref": "#/components/schemas/Error"}
_ERROR_DESCRIPTIONS = {
    "400": "Invalid input: malformed JSON, wrong types, unknown values, missing fields.",
    "401": "No or invalid credentials.",
    "403": "Authenticated, but the role does not allow this.",
    "404": "Not found (or not visible to you), also when a field names an id that does not exist.",
    "409": "Conflict with the current state: changed since your version, or not in a state that "
    "allows this (e.g. approving a draft).",
    "413": "Request body too large.",
    "415": "Unsupported media type (send application/json).",
    "422": "Well formed, but breaks a rule between values that no schema states (a reference "
    "to a missing item, repeated orders, coding not ready to submit); each problem is named.",
    "414": "Query string too long (longer than MAX_QUERY_STRING_LENGTH characters).",
    "429": "Too many requests: wait the number of seconds in the Retry-After header.",
}


def add_error_responses(result: dict, generator, request, public) -> dict:
    """Document the error answers every operation can give, in the common error format."""
    components = result.setdefault("components", {}).setdefault("schemas", {})
    components["Error"] = {
        "type": "object",
        "properties": {
            "detail": {"type": "string"},
            "errors": {"type": "array", "items": {"type": "string"}},
            "current_version": {"type": "integer"},
        },
        "required": ["detail"],
    }
    for path, operations in result.get("paths", {}).items():
        if not path.startswith("/api/v1/"):
            continue
        for method, operation in operations.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            codes = ["400", "401", "403", "404", "414", "429"]
            if method in {"post", "put", "patch", "delete"}:
                codes += ["409", "413", "415", "422"]
            for code in codes:
                operation["responses"].setdefault(
                    code,
                    {
                        "description": _ERROR_DESCRIPTIONS[code],
                        "content": {"application/json": {"schema": _ERROR_REF}},
                    },
                )
    return result


# What ``parse_json`` and DRF refuse in any input, stated where the schema leaves it open.
JSON_INT_LIMIT = 2**63 - 1
NO_NUL_PATTERN = "^[^\\u0000]*$"
NOT_BLANK_PATTERN = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$"
_FREE_TEXT_FORMATS = {None, "", "email", "uri", "slug"}
_COMPONENT_REF = "#/components/schemas/"


def state_input_limits(result: dict, generator, request, public) -> dict:
    """Give every integer its accepted range and every free text the no-NUL rule.

    Only inputs are tightened (parameters and JSON request bodies, following their ``$ref``s
    into the components): an answer is what it is.
    """
    components = result.get("components", {}).get("schemas", {})
    seen: set[int] = set()
    for schema in _input_schemas(result):
        _tighten(schema, components=components, seen=seen)
    return result


def _input_schemas(result: dict) -> list[dict]:
    schemas: list[dict] = []
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            schemas += [p["schema"] for p in operation.get("parameters", []) if "schema" in p]
            # Multipart uploads are forms of files, not JSON: their limits are the files' formats.
            media = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if media and "schema" in media:
                schemas.append(media["schema"])
    return schemas


def _tighten(schema: Any, *, components: dict, seen: set[int]) -> None:
    if isinstance(schema, list):
        for item in schema:
            _tighten(item, components=components, seen=seen)
        return
    if not isinstance(schema, dict) or id(schema) in seen:
        return
    seen.add(id(schema))
    ref = schema.get("$ref", "")
    if ref.startswith(_COMPONENT_REF):
        _tighten(components.get(ref.removeprefix(_COMPONENT_REF)), components=components, seen=seen)
    if schema.get("type") == "integer":
        schema.setdefault("minimum", -JSON_INT_LIMIT)
        schema.setdefault("maximum", JSON_INT_LIMIT)
    if (
        schema.get("type") == "string"
        and "enum" not in schema
        and "pattern" not in schema
        and schema.get("format") in _FREE_TEXT_FORMATS
    ):
        schema["pattern"] = NO_NUL_PATTERN
    for value in schema.values():
        if isinstance(value, (dict, list)):
            _tighten(value, components=components, seen=seen)


def to_openapi30(schema: Any) -> Any:
    """A JSON Schema (draft 2020-12 subset used in metrics.families.payload.schema) as an OpenAPI 3.0 schema."""
    if isinstance(schema, list):
        return [to_openapi30(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in {"$schema", "$id"}:
            continue
        if key == "properties":
            out[key] = {name: to_openapi30(sub) for name, sub in value.items()}
        elif key in {"items", "additionalProperties"} or key in {"oneOf", "anyOf", "allOf"}:
            out[key] = to_openapi30(value)
        else:
            out[key] = copy.deepcopy(value)
    types = out.get("type")
    if isinstance(types, list):
        non_null = [t for t in types if t != "null"]
        out["type"] = non_null[0] if len(non_null) == 1 else "string"
        if "null" in types:
            out["nullable"] = True
    if "const" in out:
        const = out.pop("const")
        out["enum"] = [const]
        out.setdefault("type", _json_type_name(const))
    if "enum" in out:
        values = out["enum"]
        if None in values:
            out["nullable"] = True
        non_null = [v for v in values if v is not None]
        if non_null and "type" not in out:
            out["type"] = _json_type_name(non_null[0])
    for combinator in ("oneOf", "anyOf"):
        # {"oneOf": [X, {"type": "null"}]} → X, nullable
        options = out.get(combinator)
        if (
            isinstance(options, list)
            and len(options) == 2
            and {"type": "null"} in schema.get(combinator, [])
        ):
            other = next(
                o
                for o, raw in zip(options, schema[combinator], strict=True)
                if raw != {"type": "null"}
            )
            out.pop(combinator)
            out.update(copy.deepcopy(other))
            out["nullable"] = True
    return out


def _json_type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object"
