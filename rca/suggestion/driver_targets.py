"""Whether a step moves the NVIDIA driver backwards: to a release older than the one the
incident shows installed, or down while the message says the driver is too old.

NVIDIA's drivers are backward compatible with CUDA: "Drivers have always been backwards
compatible with CUDA. This means that a CUDA 11.0 application will be compatible with R450
(11.0), R455 (11.1) and beyond" (CUDA Compatibility, *Frequently Asked Questions*,
https://docs.nvidia.com/deploy/cuda-compatibility/frequently-asked-questions.html), and each
CUDA toolkit needs at least the driver its release notes list (*CUDA Toolkit Release Notes*,
"CUDA Toolkit and Corresponding Driver Versions",
https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html; the family minimums are
``rca/knowledge/compatibility/cuda-driver.toml``). So a step whose purpose is to let the driver
run a CUDA runtime never needs a driver older than the installed one: an older driver runs no
CUDA release the installed one cannot, and moving to it can break a working machine.

``driver-moved-older`` is a fact *relative to a step*: it is read from the step's wording with
the incident's values filled in (a ``{documented-pairing}`` of "driver 525 or newer"), or from
a suggestion's own action when it restates the step or says its ``says`` words, against the
driver the incident shows (:func:`installed_driver`). A runbook step opts in by naming it in
``unless``; a step that rolls a driver back after a regression, or installs the last driver a
dropped GPU supports, does not. The step moves the driver older when every driver version its
action names is older than the installed one (alternatives such as "410+, or 384.111+ with the
compatibility package" keep it), or when it downgrades the driver while the message says the
driver is too old for the CUDA runtime (``driver-older-than-runtime``). Where the incident
shows only the CUDA release its driver supports, the driver is at least the one NVIDIA
packages with that release (:mod:`.driver_floors`: a driver reporting CUDA 11.6 is a 510, not
merely the 450 any 11.x build runs on), and only a target of an older branch is older; not under
NVIDIA's forward-compatibility package, whose libcuda (and so the CUDA release reported) comes
from a newer branch than the kernel module installed (:mod:`.cuda_components`). When the
kernel reports its module out of step with the user-space libraries (:mod:`.driver_mismatch`),
the loaded module is the installed driver. Libraries newer than it are a package upgrade
waiting for a reboot, and a step that moves to them moves the driver forward; libraries older
than it (``driver-libraries-older``) are mostly driver libraries installed in a container
image, and moving the host's driver down to them is still moving it older: removing them
from the image is the fix.
Every pattern is linear (:mod:`ingest.linear_regex`) over a capped action.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import islice

from ingest.linear_regex import LinearMatch
from ingest.linear_regex import compile as linear
from rca.suggestion.cuda_components import (
    component_facts,
    driver_cuda,
    forward_compat,
    shown_drivers,
)
from rca.suggestion.driver_floors import driver_floor
from rca.suggestion.driver_mismatch import driver_mismatch
from rca.suggestion.negated_clauses import governed_end, negates_omission, turned_down
from rca.suggestion.old_mentions import alternation, anywhere, before_mention
from rca.suggestion.version_numbers import parse_version

__all__ = [
    "RELATIVE_FACTS",
    "InstalledDriver",
    "driver_harms",
    "driver_targets",
    "installed_driver",
    "moved_older",
    "relative_facts",
]

#: The facts of :data:`rca.corpus.step_facts.FACTS` read against a step's wording.
RELATIVE_FACTS = frozenset({"driver-moved-older"})
_MAX_ACTION = 2000
#: A driver version: three digits and up to two dotted parts, alone or in a branch or
#: package name ("525", "470.57.02", "R470", "nvidia-driver-535").
_NUMBER = linear(r"(?:\bR|\b)(?P<v>[1-9]\d{2}(?:\.\d{1,3}){0,2})\b")
#: Words that make a number near them a driver version: "driver", "NVIDIA" ("downgrade NVIDIA
#: to 470.82.01", the packages nvidia-driver-NNN, nvidia-utils-NNN, nvidia-dkms-NNN,
#: nvidia-kernel-common-NNN; cuda-drivers-NNN by "drivers"), a driver "branch" or "series".
_DRIVER_WORD = linear(r"\b(?:drivers?|nvidia|branch|series)\b", ignore_case=True)
#: "Replace driver 535 with 470": the number "with" follows in a replacing clause is the one
#: replaced.
_REPLACED = linear(r"^\s*with\b", ignore_case=True)
_REPLACING = anywhere("replacing-verbs", "swapping")
#: How far from the word "driver" a number is still its version: after it ("driver 525 or
#: newer", "driver (R470)"), and before it ("the 535 driver", "R470 branch driver").
_AFTER, _BEFORE = 48, 24
#: A number these words (:mod:`.old_mentions`) precede, read in :data:`_NOT_TARGET_WINDOW`
#: characters before it, is the driver it moves from, avoids or has now, not its target ("from
#: 470", "not 396", "instead of 460", "installed: 535"). Not the judged-old group: "install the
#: older 470 driver" is where a downgrade goes.
_NOT_TARGET = before_mention("preference", "source", "negation", "current-state", then=r"[\s(,:]*$")
_NOT_TARGET_WINDOW = 16
_CLAUSE_BREAKS = (". ", "; ", "\n", "? ", "! ")
#: A requirement, not a target: a number a requirement word introduces in its clause ("needs
#: NVIDIA driver 530", "at least the R525 driver", "driver >= 525.60.13"), read up to the
#: number.
_REQUIRED_BEFORE = linear(
    r"(?:\b(?:at\s+least|min(?:imum)?|requires?|required|needs?|needed|supports?|supported\s+by)"
    r"\b|>=|≥)[\s:]*(?:(?:an?|the|any|nvidia|gpu|cuda|display|kernel|drivers?|versions?"
    r"|branch|release|of)\b[\s:]*){0,6}$",
    ignore_case=True,
)
#: A floor after a number ("530 or newer", "R525+"): in a clause that describes what a build
#: needs or a driver runs ("which any driver 450.80.02 or newer supports") a requirement; in
#: one that moves the driver ("update it to 525 or newer") still where the step moves it.
_FLOOR_AFTER = linear(r"^\s*(?:\+|(?:or|and)\s+(?:newer|later|above|higher)\b)", ignore_case=True)
#: A parenthesis right after the driver word is the driver's own version, in apposition:
#: "upgrade the NVIDIA driver (550 or newer)", "(at least 550)", "(>= 550)", "(e.g. 550)". A
#: floor word inside it ("at least", "minimum", ">=") is that driver's floor, not a
#: requirement the clause quotes; whether the clause moves the driver or states what a build
#: needs is read before the parenthesis ("which need the NVIDIA driver (550 or newer)").
_APPOSED = linear(
    r"\bdrivers?\s*(?P<paren>\()\s*(?:(?:eg|ie)\b[\s,:]*)?(?:version\s+)?"
    r"(?P<floor>(?:at\s+least|min(?:imum)?\b\.?|>=|≥)[\s:]*(?:version\s+)?)?$",
    ignore_case=True,
)
#: "e.g.", "i.e." and "min.", which end no clause: read without their stops (the text keeps
#: its length).
_ABBREVIATION = linear(r"\b(?:e\.g|i\.e|min)\.", ignore_case=True)
_DESCRIBING = linear(
    r"^\s*(?:which|that|whose|as|since|because|so|where|while)\b", ignore_case=True
)
_MAX_MATCHES = 24
#: Units that make a number near "driver" a size or a clock, not a driver version.
_UNITS = ("mb", "mib", "gb", "gib", "w ", "mhz", "%")
_WHOSE = r"(?:(?:the|your|a|an|host'?s?|nvidia|gpu|cuda|display|kernel)\s+){0,4}"
#: "Downgrade the NVIDIA driver", "roll back the driver", "driver downgrade". Not "older
#: drivers": "older drivers do not support CUDA 12" or "a build for older drivers" says
#: why to update, or what to install instead, not to move the driver down.
_DOWNGRADE = linear(
    r"\b(?:downgrad\w{0,4}|roll(?:ing)?\s+back|revert\w{0,3})\s+(?:to\s+)?" + _WHOSE + r"drivers?\b"
    r"|\bdrivers?\s+downgrade",
    ignore_case=True,
)
#: Words before a number or a downgrade in its clause that make it no target: a refusal ("do
#: not downgrade the driver", "instead of downgrading the driver, install the cu118 wheels")
#: or a removal ("remove the nvidia-driver-570 packages from the image", "rebuild it without
#: the 570 driver packages", "stop installing NVIDIA driver 570"): taking a driver's packages
#: out moves nothing to it. Each governs its own verb phrase only
#: (:func:`.negated_clauses.governed_end`): "don't upgrade but downgrade the driver to 460"
#: downgrades it.
#: The words are :mod:`.old_mentions`' refusing groups; not its source group ("downgrade from
#: 535 to 470" moves to 470) nor "than" ("a driver newer than 470" is a floor, read by
#: :data:`_REQUIRED_BEFORE`).
_REFUSED = linear(
    r"\b(?:"
    + alternation("preference", "negation", "exclusion", "removal")
    + r"|stop\s+\w{2,12}ing)\b",
    ignore_case=True,
)


@dataclass(frozen=True)
class InstalledDriver:
    """The driver the incident shows installed: ``version`` as printed (``exact``), or, when
    only the CUDA release it supports is shown, the branch NVIDIA packages with that release
    (a one-part lower bound, :func:`.driver_floors.driver_floor`). ``libraries`` is the
    user-space libraries' version when the kernel reports them out of step with the loaded
    module (:mod:`.driver_mismatch`);
    ``versions`` the CUDA version facts the incident shows, which make an older driver a harm
    (:func:`driver_harms`)."""

    version: tuple[int, ...]
    shown: str
    exact: bool
    libraries: str = ""
    #: The CUDA version facts the incident shows (:func:`.component_facts`): a driver too old
    #: for the runtime, a library major missing, the module and libraries out of step.
    versions: frozenset[str] = frozenset()

    def as_line(self) -> str:
        """The driver in words, for the prompt's incident facts: what a suggestion is held to."""
        # What holds under NVIDIA's CUDA Compatibility guide
        # (https://docs.nvidia.com/deploy/cuda-compatibility/): a driver runs the CUDA
        # runtimes up to the release it reports; a newer runtime of the same major may run
        # under minor-version compatibility (R525+ for 12.x, with limits such as PTX JIT),
        # and a newer major only under forward compatibility (the cuda-compat package, on
        # supported datacenter GPUs). No older driver runs a runtime this one cannot.
        line = (
            f"installed NVIDIA driver: {self.shown}: a driver supports the CUDA runtimes up to"
            " the CUDA version it reports; a newer runtime of the same major may run under"
            " minor-version compatibility, and forward compatibility needs the cuda-compat"
            " package on supported datacenter GPUs; a driver older than this one runs no CUDA"
            " runtime this one cannot, so it fixes no CUDA version mismatch"
        )
        if self.libraries and "driver-libraries-older" in self.versions:
            line += (
                f" (the user-space driver libraries installed are {self.libraries}, older than"
                " the loaded kernel module: mostly driver libraries installed in a container"
                " image, which no reboot or reload replaces; remove them and use the host's)"
            )
        elif self.libraries:
            line += (
                f" (the user-space driver libraries installed are {self.libraries}, out of step"
                " with the loaded kernel module: the two must be brought to one version)"
            )
        return line


def installed_driver(texts: Sequence[str]) -> InstalledDriver | None:
    """The installed driver the texts show; of two different ones (a kernel module and its
    user-space library after an upgrade), the older, which bounds both from below, unless the
    kernel reports its loaded module out of step with the libraries: then the module. Under the
    forward-compatibility package the CUDA release libcuda supports is the package's, so it
    bounds nothing (:func:`~rca.suggestion.cuda_components.forward_compat`)."""
    versions = [
        (version, text) for text in shown_drivers(texts) if (version := parse_version(text))
    ]
    mismatch = driver_mismatch(texts)
    if mismatch is not None and (module := parse_version(mismatch.module)):
        # the loaded module wins over the user-space half (TF's "libcuda reported version")
        versions = [(module, mismatch.module)]
    if versions:
        low, shown = min(versions)
        libraries = mismatch.libraries if mismatch is not None else ""
        libraries = "" if libraries == shown else libraries
        return InstalledDriver(low, shown, True, libraries, frozenset(component_facts(texts)))
    if forward_compat(texts):
        return None
    cuda = driver_cuda(texts)
    if floor := driver_floor(cuda)[:1]:  # the branch: NVIDIA's table lists its first release
        shown = f"a driver for CUDA {cuda}, so a {floor[0]} or newer"
        return InstalledDriver(floor, shown, False, versions=frozenset(component_facts(texts)))
    return None


def _near_driver(text: str, start: int, end: int, words: list[tuple[int, int]]) -> bool:
    """Whether the number at ``start:end`` has the word "driver" close by in its clause."""
    for word_start, word_end in words:
        if word_end <= start <= word_end + _AFTER:
            between = text[word_end:start]
        elif end <= word_start <= end + _BEFORE:
            between = text[end:word_start]
        else:
            continue
        if not any(mark in between for mark in _CLAUSE_BREAKS):
            return True
    return False


def driver_targets(action: str | None) -> list[tuple[int, ...]]:
    """The driver versions ``action`` names as where it moves the driver, in order: numbers
    near the word "driver", except a size or clock (a unit follows), the driver it moves
    from or avoids ("from 470", "not 396", "instead of 460"), one a refusal in its clause
    governs ("do not downgrade the driver to 470") and a requirement ("which need NVIDIA
    driver 530 or newer"). A number in parentheses right after the driver word is that
    driver's own ("upgrade the NVIDIA driver (at least 550)", :data:`_APPOSED`). No action
    (``None``, as a draft without one has) names none."""
    return [version for version, _, _ in _named_targets(action or "")]


def _clause(text: str, start: int) -> str:
    """The text of the clause ``start`` is in, up to ``start`` (a comma ends a clause)."""
    begin = max(text.rfind(mark, 0, start) for mark in (*_CLAUSE_BREAKS, ", "))
    return text[begin + 1 : start]


def _apposed(text: str, start: int) -> LinearMatch | None:
    """The parenthesis after the driver word that the number at ``start`` opens, if any."""
    return _APPOSED.search(text[max(0, start - _AFTER) : start])


def _floor(text: str, start: int, end: int) -> bool:
    """Whether the number at ``start:end`` is a floor: one follows it ("530 or newer",
    "R525+"), or a floor word opens its parenthesis ("driver (at least 525)")."""
    apposed = _apposed(text, start)
    return bool(_FLOOR_AFTER.search(text[end : end + 16]) or (apposed and apposed["floor"]))


def _required(text: str, start: int, end: int) -> bool:
    """Whether the number at ``start:end`` is a requirement, not where the text moves the
    driver: a requirement word introduces it, or a floor follows it in a clause that describes
    rather than moves. A number in apposition to the driver (:data:`_APPOSED`) is read as if
    it stood where its parenthesis opens."""
    apposed = _apposed(text, start)
    if apposed is not None:
        clause = _clause(text, max(0, start - _AFTER) + apposed.start(1)).rstrip()
    else:
        clause = _clause(text, start)
    if _REQUIRED_BEFORE.search(clause[-_AFTER * 2 :]):
        return True
    return _floor(text, start, end) and bool(_DESCRIBING.search(clause))


def _refused(text: str, start: int, end: int, down: Sequence[tuple[int, int]]) -> bool:
    """Whether a refusal or removal in its clause governs the number (or downgrade) at
    ``start:end``: "do not downgrade the driver to 470", "rather than installing NVIDIA
    driver 470", "remove the 570 driver packages"; or the action turns down the part it is
    in (``down``, :func:`.negated_clauses.turned_down`: "because the 535 one is not
    required"). The clause is read through the target, so that a new verb just before it
    ends a refusal's reach: "remove torch and downgrade the driver" downgrades it. A negated
    omission refuses nothing (:func:`.negated_clauses.negates_omission`): "don't forget to
    downgrade the driver to 470" downgrades it."""
    if any(begin <= start < stop for begin, stop in down):
        return True
    begin = start - len(_clause(text, start))
    clause, at = text[begin:end], start - begin
    refusals = islice(_REFUSED.finditer(clause[:at]), _MAX_MATCHES)
    return any(
        governed_end(clause, refusal.end()) > at and not negates_omission(clause[refusal.end() :])
        for refusal in refusals
    )


def _named_targets(action: str) -> list[tuple[tuple[int, ...], str, bool]]:
    """:func:`driver_targets`, each with the number as written and whether it is a floor a
    moving clause sets ("update the driver to 525 or newer")."""
    text = _ABBREVIATION.sub(lambda m: m[0].replace(".", "").ljust(len(m[0])), action[:_MAX_ACTION])
    words = [m.span() for m in islice(_DRIVER_WORD.finditer(text), _MAX_MATCHES)]
    found: list[tuple[tuple[int, ...], str, bool]] = []
    down = turned_down(text) if words else []
    for match in islice(_NUMBER.finditer(text), _MAX_MATCHES if words else 0):
        after = text[match.end() : match.end() + 5].lstrip().lower() + " "
        before = text[max(0, match.start() - _NOT_TARGET_WINDOW) : match.start()]
        if after.startswith(_UNITS) or _NOT_TARGET.search(before):
            continue
        if _required(text, *match.span()) or _refused(text, *match.span(), down):
            continue
        replacing = _REPLACING.search(_clause(text, match.start()))
        if replacing and _REPLACED.search(text[match.end() : match.end() + 8]):
            continue
        version = parse_version(match.group("v"))
        new = version and all(version != seen for seen, _, _ in found)
        if new and _near_driver(text, *match.span(), words):
            found.append((version, match.group("v"), _floor(text, *match.span())))
    return found


def _older(target: tuple[int, ...], driver: InstalledDriver) -> bool:
    """Whether ``target`` is older than the installed driver. The release of user-space
    libraries older than a mismatched module is no exception: they are mostly driver
    libraries installed in a container image, which moving the host's driver down to them
    does not fix (removing them from the image does)."""
    if not driver.exact:
        return target[0] < driver.version[0]
    return target < driver.version[: len(target)]


def _downgrades(text: str) -> bool:
    """Whether ``text`` downgrades the driver: a downgrade no refusal in its clause governs."""
    down = turned_down(text)
    matches = islice(_DOWNGRADE.finditer(text), _MAX_MATCHES)
    return any(not _refused(text, *match.span(), down) for match in matches)


def moved_older(
    action: str, driver: InstalledDriver | None, facts: Iterable[str], floors: bool = True
) -> str:
    """Why ``action`` moves the driver backwards for this incident ("" when it does not); a
    floor a moving clause sets ("update it to 525 or newer") is older only with ``floors``."""
    targets = _named_targets(action)
    if (
        driver is not None
        and targets
        and all(_older(target, driver) and (floors or not floor) for target, _, floor in targets)
    ):
        named = " or ".join(written for _, written, _ in targets)
        return f"the driver it names ({named}) is older than the one installed ({driver.shown})"
    if "driver-older-than-runtime" in facts and _downgrades(action[:_MAX_ACTION]):
        return "it downgrades the driver, which the message says is too old for the CUDA runtime"
    return ""


def driver_harms(action: str, driver: InstalledDriver | None) -> list[str]:
    """Why ``action``, whatever step it restates or none, moves the driver older than the one
    the incident shows installed, while the incident shows a CUDA version problem the driver
    bears on (:attr:`InstalledDriver.versions`). Without one (an NCCL hang after a driver
    update, a GPU only a legacy branch supports) rolling the driver back may be the fix. A
    floor ("update it to 525 or newer") is no harm: the installed driver already meets it."""
    if driver is None or not driver.versions:
        return []
    why = moved_older(action[:_MAX_ACTION], driver, driver.versions, floors=False)
    return [f"driver-moved-older: {why}"] if why else []


def relative_facts(
    unless: Iterable[str],
    wordings: Iterable[str],
    driver: InstalledDriver | None,
    facts: Iterable[str],
) -> dict[str, str]:
    """The step-relative facts among ``unless`` that hold for one of ``wordings``, each with
    why (a step's text is read up to its reason: the action is where it moves the driver)."""
    if "driver-moved-older" not in unless:
        return {}
    shown = frozenset(facts)
    for text in wordings:
        if text and (why := moved_older(text.partition("Reason:")[0], driver, shown)):
            return {"driver-moved-older": why}
    return {}
