"""The upload form, generated from a family's registry entry, and the list filters.

The form only collects: files per role (``file_<role>``) and option texts (``option_<name>``);
validation of both is the service's (`evaluation_create`), whose errors the view puts back on
the field they name.
"""

from __future__ import annotations

from typing import Any

from django import forms

from metrics.evaluations.registry import UPLOADS, Family, FileRole, InputFile, Option
from metrics.evaluations.services import MODE_ROLE, max_file_bytes
from metrics.families.selective.run_file import experiment_modes
from metrics.models import Evaluation

FILE_PREFIX = "file_"
OPTION_PREFIX = "option_"
# Options naming an experiment of the run file: a select of the modes found in the file (the
# page fills it when a file is chosen; the server when the form comes back).
MODE_OPTIONS = {"mode": "first in the file", "second_mode": "none"}


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class RoleFileField(forms.FileField):
    """The file input of one file role; the upload page links the role's example file."""

    example: str | None = None


class MultipleFileField(RoleFileField):
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


def _role_field(role: FileRole) -> RoleFileField:
    field = _file_field(role)
    field.example = role.example  # the upload page links the registry's example file
    return field


def _file_field(role: FileRole) -> RoleFileField:
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
    return RoleFileField(
        label=role.label,
        required=role.required,
        help_text=help_text,
        allow_empty_file=True,
        widget=forms.ClearableFileInput(attrs=attrs),
    )


def _mode_field(option: Option, modes: list[str]) -> forms.Field:
    """Free text underneath (the service checks the mode), shown as a select."""
    choices = [("", MODE_OPTIONS[option.name]), *((mode, mode) for mode in modes)]
    attrs = {"data-modes-from": FILE_PREFIX + MODE_ROLE, "data-empty": MODE_OPTIONS[option.name]}
    return forms.CharField(
        label=option.name.replace("_", " ").capitalize(),
        required=False,
        help_text=option.help,
        widget=forms.Select(choices=choices, attrs=attrs),
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
    # The files read from this submission (set by the upload view), kept if the page comes back.
    chosen: dict[str, list[InputFile]] | None = None

    def __init__(
        self,
        family: Family,
        *args: Any,
        kept: dict[str, list[InputFile]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.family = family
        self.kept: dict[str, list[InputFile]] = {}
        for role in family.roles:
            self.fields[FILE_PREFIX + role.name] = _role_field(role)
        self.keep(kept or {})
        modes = self._modes() if any(r.name == MODE_ROLE for r in family.roles) else []
        for option in family.options:
            if option.name in MODE_OPTIONS and modes is not None:
                self.fields[OPTION_PREFIX + option.name] = _mode_field(option, modes)
            else:
                self.fields[OPTION_PREFIX + option.name] = _option_field(option)

    def keep(self, files: dict[str, list[InputFile]]) -> None:
        """Files from an earlier try stand in for the roles left empty: not required again."""
        self.kept = dict(files)
        for role in self.family.roles:
            if role.name in self.kept:
                self.fields[FILE_PREFIX + role.name].required = False

    def _modes(self) -> list[str] | None:
        """Modes in the chosen (or kept) run files, in order; None: the family has none."""
        if not any(option.name in MODE_OPTIONS for option in self.family.options):
            return None
        datas = [item.data for item in self.kept.get(MODE_ROLE, [])]
        for upload in self.files.getlist(FILE_PREFIX + MODE_ROLE) if self.files else []:
            if (upload.size or 0) > max_file_bytes():
                continue  # refused later with its size; not read here
            upload.seek(0)
            datas.append(upload.read())
            upload.seek(0)
        return list(dict.fromkeys(mode for data in datas for mode in experiment_modes(data)))

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
        """Option values as typed (bool) or text; the service coerces and checks them (an
        empty mode is the service's default: the first mode found in the file)."""
        return {
            option.name: self.cleaned_data.get(OPTION_PREFIX + option.name)
            for option in self.family.options
        }

    def kept_names(self) -> dict[str, str]:
        """{field name: file names} of the files kept from the last try, for the page."""
        return {
            FILE_PREFIX + role: ", ".join(item.name for item in items)
            for role, items in self.kept.items()
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
        choices=[("", "All families")] + [(f.name, f.label) for f in UPLOADS.values()],
    )
    status = forms.ChoiceField(
        required=False, choices=[("", "Any status"), *Evaluation.Status.choices]
    )
    q = forms.CharField(required=False, max_length=200, label="Name contains")

    def filters(self) -> dict[str, Any]:
        if not self.is_valid():
            return {}
        return {key: value for key, value in self.cleaned_data.items() if value}
