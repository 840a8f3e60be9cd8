"""What the incident shows that a step's own words are held to: the step-relative facts.

A step-relative fact, named in a step's ``unless``, holds or not for one step: it is read from
the step's wording (values filled), from a suggestion that restates the step, or from one
that says its ``says`` words, against what the incident shows: the installed NVIDIA driver
(``driver-moved-older``, :mod:`.driver_targets`) and the module names the message says the
model lacks or the incident prints (``module-named-missing``, :mod:`.module_names`), and a
fused attention layout no printed model shows (``attention-layout-guessed``,
:mod:`.projection_layout`). One
object carries every such kind, so :class:`~rca.suggestion.premises.Premises` holds one field
for them and a new kind changes this module, not the premise checks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ingest.parsing.frames import Frame
from rca.suggestion.driver_targets import RELATIVE_FACTS as DRIVER_FACTS
from rca.suggestion.driver_targets import (
    InstalledDriver,
    driver_harms,
    driver_targets,
    installed_driver,
)
from rca.suggestion.driver_targets import relative_facts as driver_facts
from rca.suggestion.module_names import (
    MODULE_FACTS,
    ShownModules,
    misnamed,
    missing_module_harms,
    read_shown_modules,
)
from rca.suggestion.projection_layout import GUESSED, LAYOUT_FACTS, guessed_layout

__all__ = ["RELATIVE_FACTS", "StepRelative", "read_step_relative", "relative_facts"]

#: The facts of :data:`rca.corpus.step_facts.FACTS` read against a step's wording.
RELATIVE_FACTS = DRIVER_FACTS | MODULE_FACTS | {GUESSED}


@dataclass(frozen=True)
class StepRelative:
    """The incident's side of every step-relative fact."""

    driver: InstalledDriver | None = None
    modules: ShownModules = ShownModules()

    def as_lines(self) -> list[str]:
        """What a suggestion is held to, in words, for the prompt."""
        driver = [self.driver.as_line()] if self.driver is not None else []
        return driver + self.modules.as_lines()

    def harms(self, action: str, drivers: bool = True, modules: bool = True) -> list[str]:
        """What in ``action`` the incident rules out whichever step it restates: a driver older
        than the one installed (:func:`.driver_harms`), a module PEFT's message lists as
        matching nothing (:func:`.missing_module_harms`); each kind only when asked (a step's
        text is not read for a kind the answer restating it says itself)."""
        return [
            *(driver_harms(action, self.driver) if drivers else []),
            *(missing_module_harms(action, self.modules) if modules else []),
        ]


def _module_getattr(frames: Sequence[Frame]) -> bool:
    """Whether PyTorch's ``nn.Module.__getattr__`` raised the error (the last frame)."""
    if not frames:
        return False
    filename = str(frames[-1].get("filename") or "").replace("\\", "/")
    function = str(frames[-1].get("function") or "")
    return filename.endswith("nn/modules/module.py") and function == "__getattr__"


def read_step_relative(
    texts: Sequence[str], code: Sequence[str], frames: Sequence[Frame]
) -> StepRelative:
    """What ``texts`` (message and logs) and the failing ``code`` show for these facts."""
    modules = read_shown_modules(texts, code, _module_getattr(frames))
    return StepRelative(installed_driver([*texts, *code]), modules)


def relative_facts(
    unless: Iterable[str],
    step: str,
    wording: str,
    shown: StepRelative,
    facts: Iterable[str],
    said: str = "",
) -> dict[str, str]:
    """The step-relative facts among ``unless`` that hold, each with why. ``step`` is the
    step's wording (filled) a suggestion restates, ``wording`` the suggestion's action (or
    the filled step), ``said`` the text of a step whose ``says`` words it holds. A suggestion
    is held to the step's words only for what it says nothing of: one that names a driver
    version of its own is judged by it, one that names no module by the step's names."""
    unless, facts = frozenset(unless), frozenset(facts)
    wordings = [wording] if driver_targets(wording) else [step, wording]
    found = driver_facts(unless, wordings, shown.driver, facts)
    modules = "module-named-missing" in unless
    if modules and (why := misnamed([wording, step, said], shown.modules)):
        found["module-named-missing"] = why
    known = bool(LAYOUT_FACTS & facts)  # a printed or named model shows the layout
    if (
        GUESSED in unless
        and not known
        and (why := guessed_layout([wording, step, said], shown.modules))
    ):
        found[GUESSED] = why
    return found
