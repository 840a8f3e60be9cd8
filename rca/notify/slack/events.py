"""What a Slack message is about: plain, frozen data with no ORM in it.

Callers turn models into these events, so the payload builder in :mod:`rca.notify.slack.payloads`
stays pure and can be tested without a database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class IssueInfo:
    id: int
    title: str
    service: str = ""
    model_id: str = ""
    error_type: str = ""
    occurrence_count: int = 0


@dataclass(frozen=True)
class SuggestionInfo:
    action: str
    reason: str
    runbook_slug: str = ""
    confidence: float = 0.0
    validation: dict[str, Any] = field(default_factory=dict)
    provider: str = ""
    model: str = ""
    id: int = 0  # the Suggestion's pk, which the Accept / Reject buttons name (0: no buttons)
    incident_id: int = 0  # the occurrence it was written for: the page Reject opens shows it
    #: No confident suggestion: the message says so, lists these runbook titles and the
    #: evidence that would help, and offers no action to accept.
    abstained: bool = False
    closest: tuple[str, ...] = ()
    wanted: tuple[str, ...] = ()


@dataclass(frozen=True)
class IssueEvent:
    """A new issue, a regression, or a suggestion ready for an issue."""

    kind: str  # new_issue | regression | suggestion
    project: str
    issue: IssueInfo
    suggestion: SuggestionInfo | None = None


@dataclass(frozen=True)
class DigestEvent:
    """New issues folded into one message because they arrived in a storm."""

    project: str
    issues: tuple[IssueInfo, ...]
    window_minutes: float


@dataclass(frozen=True)
class TestEvent:
    """The settings page's "send test message"."""

    __test__ = False  # not a pytest test class, despite the name
    project: str


Event = IssueEvent | DigestEvent | TestEvent
