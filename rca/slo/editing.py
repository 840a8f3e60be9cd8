"""The settings page's rule form: text fields in, a valid `SloRule` out, errors per field.

A Django ModelForm (validation, error messages, the unique name) with two fields spelt for
people: error types / alert names as a comma-separated list, labels as ``name=value`` pairs.
"""

from __future__ import annotations

from typing import Any

from django import forms

from ingest.models import Project
from rca.slo.models import SloRule

MAX_NAMES = 20
MAX_LABELS = 10
MAX_WINDOW_SECONDS = 7 * 24 * 3600


def _names(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    if len(names) > MAX_NAMES or any(len(n) > 255 for n in names):
        raise forms.ValidationError(f"at most {MAX_NAMES} names of up to 255 characters")
    return names


def _labels(text: str) -> dict[str, str]:
    labels = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, eq, value = part.partition("=")
        if not eq or not name.strip():
            raise forms.ValidationError(f"write labels as name=value, not {part[:50]!r}")
        labels[name.strip()[:100]] = value.strip().strip('"')[:1000]
    if len(labels) > MAX_LABELS:
        raise forms.ValidationError(f"at most {MAX_LABELS} labels")
    return labels


class SloRuleForm(forms.ModelForm):  # type: ignore[type-arg]  # generic only in the stubs
    error_types_text = forms.CharField(
        required=False, max_length=4000, label="Error types / alert names (comma-separated)"
    )
    labels_text = forms.CharField(
        required=False, max_length=4000, label="Alert labels (name=value, comma-separated)"
    )
    threshold = forms.IntegerField(min_value=1, max_value=1_000_000)
    window_seconds = forms.IntegerField(min_value=1, max_value=MAX_WINDOW_SECONDS)

    field_order = [
        "name",
        "condition",
        "signal",
        "error_types_text",
        "message_contains",
        "labels_text",
        "threshold",
        "window_seconds",
        "enabled",
    ]

    class Meta:
        model = SloRule
        fields = [
            "name",
            "condition",
            "signal",
            "message_contains",
            "threshold",
            "window_seconds",
            "enabled",
        ]

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.instance.project = project
        if self.instance.pk and not self.is_bound:
            self.initial["error_types_text"] = ", ".join(self.instance.error_types)
            self.initial["labels_text"] = ", ".join(
                f"{k}={v}" for k, v in self.instance.labels.items()
            )

    def clean_error_types_text(self) -> list[str]:
        return _names(self.cleaned_data.get("error_types_text") or "")

    def clean_labels_text(self) -> dict[str, str]:
        return _labels(self.cleaned_data.get("labels_text") or "")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        name = data.get("name")
        same = SloRule.objects.filter(project=self.instance.project, name=name)
        if name and same.exclude(pk=self.instance.pk).exists():
            self.add_error("name", "this project has a rule of that name already")
        if data.get("signal") == SloRule.Signal.ALERTS and not data.get("error_types_text"):
            self.add_error("error_types_text", "an alert rule needs at least one alert name")
        return data

    def save(self, commit: bool = True) -> SloRule:
        self.instance.error_types = self.cleaned_data["error_types_text"]
        self.instance.labels = self.cleaned_data["labels_text"]
        rule: SloRule = super().save(commit=commit)
        return rule


def rule_form(project: Project, rule_id: int | None, data: Any = None) -> SloRuleForm | None:
    """The form for one of the project's rules (None: no such rule), or for a new one."""
    rule = SloRule(project=project)
    if rule_id is not None:
        found = SloRule.objects.filter(project=project, pk=rule_id).first()
        if found is None:
            return None
        rule = found
    return SloRuleForm(data, instance=rule, project=project, prefix=form_prefix(rule_id))


def form_prefix(rule_id: int | None) -> str:
    """Field names per form (`r7-threshold`, `new-name`), so one page holds them all."""
    return f"r{rule_id}" if rule_id is not None else "new"


def rule_forms(project: Project, invalid: SloRuleForm | None = None) -> list[SloRuleForm]:
    """A form per rule (the defaults created if the project has none) and one to add a rule;
    `invalid`, a form that failed to save, stands in for its rule's with its errors."""
    from rca.slo.defaults import rules_of

    forms_ = [
        SloRuleForm(instance=r, project=project, prefix=form_prefix(r.pk))
        for r in rules_of(project)
    ]
    forms_.append(SloRuleForm(project=project, prefix=form_prefix(None)))
    if invalid is not None:
        forms_ = [invalid if f.prefix == invalid.prefix else f for f in forms_]
    return forms_
