"""The upload form, generated from a family's registry entry, and the list filters.

The form only collects: files per role (``file_<role>``) and option texts (``option_<name>``);
validation of both is the service's (`evaluation_create`), whose errors the view puts back on
the field they name.
"""

from __future__ import annotations

from typing import Any

from django import forms

from metrics.evaluations.registry import FAMILIES, Family, FileRole, Option
from metrics.models import Evaluation

FILE_PREFIX = "file_"
OPTION_PREFIX = "option_"


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Up to the role's max_files files in one <input type=file multiple>."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list:
        items = data if isinstance(data, list | tuple) else [data]
        cleaned = [super(MultipleFileField, self).clean(item, initial) for item in items if item]
        if not cleaned and self.required:
            raise forms.ValidationError(self.error_messages["required"], code="required")
        return cleaned


def _role_field(role: FileRole) -> forms.FileField:
    field = _file_field(role)
    field.example = role.example  # the upload page links the registry's example file
    return field


def _file_field(role: FileRole) -> forms.FileField:
    attrs = {"accept": role.accept}
    help_text = f"{', '.join(role.formats).upper()}. {role.help}".strip()
    if role.max_files > 1:
        return MultipleFileField(
            label=role.label,
            required=role.required,
            help_text=f"{help_text} Up to {role.max_files} files.",
            allow_empty_file=True,
            widget=MultipleFileInput(attrs={**attrs, "multiple": True}),
        )
    return forms.FileField(
        label=role.label,
        required=role.required,
        help_text=help_text,
        allow_empty_file=True,
        widget=forms.ClearableFileInput(attrs=attrs),
    )


def _option_field(option: Option) -> forms.Field:
    label = option.name.replace("_", " ").capitalize()
    if option.kind == "bool":
        return forms.BooleanField(
            label=label, required=False, initial=bool(option.default), help_text=option.help
        )
    if option.kind == "choice":
        return forms.ChoiceField(
            label=label,
            required=False,
            choices=[(choice, choice) for choice in option.choices],
            initial=option.default,
            help_text=option.help,
        )
    widget = forms.Textarea(attrs={"rows": 2}) if option.kind == "mapping" else None
    return forms.CharField(
        label=label,
        required=False,
        initial=option.as_text(option.default),
        help_text=option.help,
        widget=widget,
    )


class EvaluationUploadForm(forms.Form):
    name = forms.CharField(
        max_length=200, required=False, help_text="Defaults to the first file's name."
    )

    def __init__(self, family: Family, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.family = family
        for role in family.roles:
            self.fields[FILE_PREFIX + role.name] = _role_field(role)
        for option in family.options:
            self.fields[OPTION_PREFIX + option.name] = _option_field(option)

    def file_fields(self) -> list[forms.BoundField]:
        return [self[FILE_PREFIX + role.name] for role in self.family.roles]

    def option_fields(self) -> list[forms.BoundField]:
        return [self[OPTION_PREFIX + option.name] for option in self.family.options]

    def uploads(self) -> dict[str, list]:
        """{role: [UploadedFile, ...]} of the cleaned form."""
        uploads = {}
        for role in self.family.roles:
            value = self.cleaned_data.get(FILE_PREFIX + role.name)
            items = value if isinstance(value, list) else [value] if value else []
            if items:
                uploads[role.name] = items
        return uploads

    def options(self) -> dict[str, Any]:
        """Option values as typed (bool) or text; the service coerces and checks them."""
        return {
            option.name: self.cleaned_data.get(OPTION_PREFIX + option.name)
            for option in self.family.options
        }

    def field_for_file(self, file_name: str) -> str | None:
        """The form field an InputError's file refers to (by role or uploaded name)."""
        for role in self.family.roles:
            key = FILE_PREFIX + role.name
            value = self.cleaned_data.get(key)
            names = [item.name for item in (value if isinstance(value, list) else [value]) if item]
            if file_name == role.name or any(file_name.startswith(name) for name in names):
                return key
        return None

    def field_for_option(self, option_name: str | None) -> str | None:
        if option_name and self.family.option(option_name):
            return OPTION_PREFIX + option_name
        return None


class EvaluationFilterForm(forms.Form):
    family = forms.ChoiceField(
        required=False,
        choices=[("", "All families")] + [(f.name, f.label) for f in FAMILIES.values()],
    )
    status = forms.ChoiceField(
        required=False, choices=[("", "Any status"), *Evaluation.Status.choices]
    )
    q = forms.CharField(required=False, max_length=200, label="Name contains")

    def filters(self) -> dict[str, Any]:
        if not self.is_valid():
            return {}
        return {key: value for key, value in self.cleaned_data.items() if value}
