"""The two suggestion providers: any OpenAI-compatible server, and the offline composer.

The OpenAI provider speaks the chat completions protocol through the official client, so
OpenAI, vLLM, Ollama and llama.cpp all work; the client already retries 429/5xx and honours
``Retry-After``/``retry-after-ms``. The offline provider needs no network and no model: it
adapts the top runbook's remediation to the incident's own shapes and frames, so a fresh
install gives useful, validated suggestions and the pipeline always has a fallback.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any, cast

from rca.context import AnalysisContext, Evidence, innermost_app_frame
from rca.validation import format_ok, named_dims

__all__ = [
    "DEFAULT_MODEL",
    "Draft",
    "OfflineProvider",
    "OpenAIProvider",
    "ProviderError",
    "parse_answer",
    "provider_from_settings",
]

DEFAULT_MODEL = "gpt-4o-mini"
OFFLINE_MODEL = "runbook-remediation-1"


@dataclass
class Draft:
    """One provider answer, before validation; ``raw`` is exactly what the provider said."""

    action: str
    reason: str
    runbook: str
    confidence: float
    provider: str
    model: str
    raw: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    latency_ms: int = 0


class ProviderError(Exception):
    """The provider gave no usable answer; ``raw`` keeps what it said, for the record."""

    def __init__(self, message: str, *, status: int | None = None, raw: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.raw = raw


# --------------------------------------------------------------------------- parsing

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def _as_answer(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict) and any(str(key).lower() == "action" for key in value):
        return {str(key).lower(): item for key, item in value.items()}
    return None


def parse_answer(text: str) -> dict[str, Any]:
    """Find the answer object in what a model said: bare JSON, a code fence, or JSON in prose.

    Servers without JSON mode (and chatty models) wrap the object in fences or sentences;
    we take the first object that has an ``action`` key. Keys are lower-cased.
    """
    if not isinstance(text, str) or not text.strip():
        raise ProviderError("the model returned an empty answer", raw=text or "")
    candidates = [text.strip(), *(m.group(1).strip() for m in _FENCE.finditer(text))]
    for candidate in candidates:
        try:
            answer = _as_answer(json.loads(candidate))
        except (ValueError, RecursionError):
            continue
        if answer is not None:
            return answer
    decoder = json.JSONDecoder()
    for start in (m.start() for m in re.finditer(r"\{", text)):
        try:
            value, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        answer = _as_answer(value)
        if answer is not None:
            return answer
    raise ProviderError(
        f'no JSON object with an "action" key found in the answer: {text.strip()[:120]!r}',
        raw=text,
    )


def _confidence(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.5
    if number != number:  # NaN
        return 0.5
    if 1 < number <= 100:
        number /= 100  # "85" meaning 85%
    return round(min(max(number, 0.0), 1.0), 3)


def _draft_from_answer(answer: dict[str, Any], **meta: Any) -> Draft:
    def text(key: str) -> str:
        value = answer.get(key)
        return value.strip() if isinstance(value, str) else ""

    if not text("action") or not text("reason"):
        raise ProviderError('the answer lacks a non-empty "action" or "reason"', raw=meta["raw"])
    return Draft(
        action=text("action"),
        reason=text("reason"),
        runbook=text("runbook"),
        confidence=_confidence(answer.get("confidence")),
        **meta,
    )


# --------------------------------------------------------------------------- OpenAI


class OpenAIProvider:
    """Chat completions against OpenAI or any compatible server (vLLM, Ollama, llama.cpp).

    JSON mode is asked for first; servers that reject ``response_format`` are asked again
    without it (once, then remembered) and the answer is parsed tolerantly.
    """

    name = "openai"

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None,
        model: str,
        timeout: float = 30,
        max_retries: int = 2,
    ) -> None:
        import openai  # heavy; only the worker that calls an LLM pays for it

        self.model = model
        self._json_mode = True
        self._client = openai.OpenAI(
            # Local servers need no key, but the client refuses to start without one.
            api_key=api_key or "not-needed",
            base_url=base_url or None,
            timeout=timeout,
            max_retries=max_retries,
        )

    def suggest(self, messages: list[dict[str, str]]) -> Draft:
        """Ask for one suggestion; raises :class:`ProviderError` when no usable answer came."""
        import openai

        started = time.monotonic()
        try:
            try:
                response = self._complete(messages, json_mode=self._json_mode)
            except openai.BadRequestError as exc:
                if not self._json_mode or "response_format" not in _error_text(exc):
                    raise
                self._json_mode = False
                response = self._complete(messages, json_mode=False)
        except openai.APITimeoutError as exc:
            raise ProviderError(f"{self.model}: the request timed out") from exc
        except openai.APIStatusError as exc:
            raise ProviderError(
                f"{self.model}: HTTP {exc.status_code}: {_error_text(exc)[:200]}",
                status=exc.status_code,
            ) from exc
        except openai.APIError as exc:  # connection refused, bad response body, ...
            raise ProviderError(f"{self.model}: {exc}") from exc
        latency_ms = int((time.monotonic() - started) * 1000)

        usage = _usage(response)
        choices = getattr(response, "choices", None) or []
        raw = (choices[0].message.content or "") if choices else ""
        answer = parse_answer(raw)
        return _draft_from_answer(
            answer,
            provider=self.name,
            model=getattr(response, "model", None) or self.model,
            raw=raw,
            usage=usage,
            latency_ms=latency_ms,
        )

    def _complete(self, messages: list[dict[str, str]], *, json_mode: bool) -> Any:
        extra: dict[str, Any] = {"response_format": {"type": "json_object"}} if json_mode else {}
        return self._client.chat.completions.create(
            model=self.model, messages=cast(Any, messages), temperature=0, **extra
        )


def _error_text(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    return f"{exc} {json.dumps(body, default=str) if body is not None else ''}"


def _usage(response: Any) -> dict[str, int]:
    usage = getattr(response, "usage", None)
    if usage is None:
        return {}
    return {
        key: int(getattr(usage, key))
        for key in ("prompt_tokens", "completion_tokens", "total_tokens")
        if isinstance(getattr(usage, key, None), int)
    }


# --------------------------------------------------------------------------- offline

_BOLD_ACTION = re.compile(r"^\*\*(?P<action>.+?)\*\*\s*(?:Reason:\s*(?P<reason>.*))?$", re.DOTALL)
_SENTENCE = re.compile(r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)(?<=[.!?])\s+(?=[A-Z`(])")
_LEADING_FILLER = re.compile(r"^(?:alternatively|or|also|optionally|then|instead)\b[,:]?\s*", re.I)


def _split_step(step: str) -> tuple[str, str]:
    """Split ``**Action.** Reason: why.`` into action and reason (one line each)."""
    text = " ".join(step.split())
    match = _BOLD_ACTION.match(text)
    if match:
        action, reason = match.group("action"), match.group("reason") or ""
    else:
        action, _, reason = text.partition(" Reason: ")
    action = _LEADING_FILLER.sub("", action.strip()).strip()
    action = action[:1].upper() + action[1:]
    return action, reason.strip()


def _first_sentence(text: str, limit: int) -> str:
    sentence = _SENTENCE.split(text.strip(), maxsplit=1)[0]
    if len(sentence) <= limit:
        return sentence
    cut = sentence[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:(")
    return cut + "…"


def _shape(dims: list[int | None]) -> str:
    return "[" + ", ".join("None" if d is None else str(d) for d in dims) + "]"


def _specifics(ctx: AnalysisContext) -> str:
    """What is particular to this incident: the mismatched shapes and where it raised."""
    parts: list[str] = []
    for diff in ctx.shape_diff[:1]:
        expected, actual = diff.get("expected") or [], diff.get("actual") or []
        what = f"`{diff['tensor']}` ({diff.get('op')})" if diff.get("tensor") else diff.get("op")
        if len(expected) != len(actual):
            parts.append(
                f"Here the {what} shape has rank {len(actual)} ({_shape(actual)}) where rank"
                f" {len(expected)} ({_shape(expected)}) is expected."
            )
            continue
        pairs = [(e, a) for e, a in zip(expected, actual, strict=True) if e is not None and e != a]
        if pairs:
            got = " and ".join(f"{a} instead of {e}" for e, a in pairs[:2])
            parts.append(f"Here the {what} got {got} (expected {_shape(expected)}).")
    frame = innermost_app_frame(ctx.frames)
    if frame and frame.get("in_app") and frame.get("filename") and frame.get("function"):
        parts.append(f"It was raised in {frame['filename']}:{frame['function']}.")
    return " ".join(parts)


def _usable(step: str, ctx: AnalysisContext) -> bool:
    """A step can be used as is when its action reads as an order and it names no
    dimensions that this incident does not have."""
    action, reason = _split_step(step)
    if not format_ok(action, reason or "-")[0]:
        return False
    known = {d for diff in ctx.shape_diff for d in [*diff["expected"], *diff["actual"]]}
    return not ctx.shape_diff or named_dims(f"{action} {reason}") <= known


def _pick_step(steps: tuple[str, ...], ctx: AnalysisContext) -> str | None:
    """The first usable step: runbooks list the fix that most often applies first.

    (Choosing by word overlap with the incident was tried on the dev cases: no better on
    average and noisier, because error messages often suggest the wrong fix themselves.)
    """
    return next((step for step in steps if _usable(step, ctx)), None)


class OfflineProvider:
    """Deterministic, network-free suggestions from the top runbook's remediation.

    The first remediation step that reads as an order and names no foreign dimensions
    becomes the action; its stated reason plus the incident's specifics (mismatched dimensions, the
    failing in-app frame) become the reason.
    """

    name = "offline"
    model = OFFLINE_MODEL

    def suggest(self, ctx: AnalysisContext) -> Draft:
        started = time.monotonic()
        top = ctx.top_runbook or (ctx.evidence[0] if ctx.evidence else None)
        if top is None:
            raise ProviderError("no runbook was retrieved: nothing to base a suggestion on")
        action, reason = self._compose(top, ctx)
        confidence = self._confidence(top)
        raw = {"action": action, "reason": reason, "runbook": top.slug, "confidence": confidence}
        return Draft(
            action=action,
            reason=reason,
            runbook=top.slug,
            confidence=confidence,
            provider=self.name,
            model=self.model,
            raw=json.dumps(raw, sort_keys=True),
            usage={},
            latency_ms=int((time.monotonic() - started) * 1000),
        )

    @staticmethod
    def _compose(top: Evidence, ctx: AnalysisContext) -> tuple[str, str]:
        step = _pick_step(top.remediation, ctx)
        if step is not None:
            action, reason = _split_step(step)
        else:
            action, reason = f"Apply the remediation of the runbook '{top.title}'", ""
        action = _first_sentence(action, 200).rstrip(".") + "."
        specifics = _specifics(ctx)
        room = 400 - len(specifics) - 1
        base = _first_sentence(reason or f"This incident matches the runbook '{top.title}'.", room)
        base = base[:1].upper() + base[1:]
        return action, f"{base} {specifics}".strip()

    @staticmethod
    def _confidence(top: Evidence) -> float:
        """Retrieval scores may be unbounded (BM25); squash them into 0.05..0.9.

        Capped below 1: a composed suggestion is never as sure as a confirmed fix.
        """
        score = max(float(top.score), 0.0)
        if score > 1:
            score = score / (1 + score)
        return round(min(max(score, 0.05), 0.9), 2)


# --------------------------------------------------------------------------- selection


def _setting(name: str) -> str:
    """A Django setting when Django is configured and defines it, else the environment."""
    try:
        from django.conf import settings

        if settings.configured:
            value = getattr(settings, name, None)
            if isinstance(value, str) and value:
                return value
    except Exception:  # noqa: BLE001, S110 - Django missing or misconfigured: use the env
        pass
    return os.environ.get(name, "")


def provider_from_settings() -> tuple[OpenAIProvider | OfflineProvider, str]:
    """The configured provider and its name: OpenAI-compatible when a key or base URL is set.

    Read at call time, not import time, so a changed environment takes effect on the next
    analysis and this module imports without Django configured.
    """
    api_key = _setting("OPENAI_API_KEY")
    base_url = _setting("OPENAI_BASE_URL")
    if not api_key and not base_url:
        return OfflineProvider(), OfflineProvider.name
    model = _setting("RCA_LLM_MODEL") or DEFAULT_MODEL
    return OpenAIProvider(api_key or None, base_url or None, model), OpenAIProvider.name
