"""The Markdown structure of a runbook body: ``##`` sections, their blocks, numbered steps.

Read from runbook files the operator ships, never from incidents, so plain ``re`` is fine
here (see ``ALLOWED_RE_PATTERNS`` in ``tests/unit/test_regex_linear_time.py``). Fenced code
is never mistaken for structure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Block", "blocks", "remediation_of", "section_names", "sections"]

_SECTION_RE = re.compile(r"^##[ \t]+(?P<name>\S.*?)[ \t]*#*[ \t]*$")
_NUMBERED_ITEM_RE = re.compile(r"^\d{1,3}[.)][ \t]+\S")
_NUMBERED_PREFIX_RE = re.compile(r"^\d{1,3}[.)][ \t]+")
_BULLET_ITEM_RE = re.compile(r"^[-*+][ \t]+\S")
_FENCE_RE = re.compile(r"^[ \t]*(```|~~~)")


@dataclass(frozen=True)
class Block:
    """A unit that chunking never splits across chunks unless it alone is too long."""

    text: str
    gap_before: bool  # a blank line separated it from the previous block
    atomic: bool  # a numbered step: never split, even when over budget


def section_names(body: str) -> list[str]:
    names: list[str] = []
    in_fence = False
    for line in body.split("\n"):
        if _FENCE_RE.match(line):
            in_fence = not in_fence
            continue
        match = None if in_fence else _SECTION_RE.match(line)
        if match:
            names.append(match.group("name"))
    return names


def sections(body: str) -> list[tuple[str, str]]:
    """Split a body into ``(section name, section text)``; the H1 title line is dropped."""
    sections: list[tuple[str, list[str]]] = [("Overview", [])]
    in_fence = False
    for line in body.split("\n"):
        if _FENCE_RE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _SECTION_RE.match(line)
        if match:
            sections.append((match.group("name"), []))
        elif (
            not in_fence
            and line.startswith("# ")
            and len(sections) == 1
            and not any(seen.strip() for seen in sections[0][1])
        ):
            continue  # the H1 title; the chunk prefix already carries the title
        else:
            sections[-1][1].append(line)
    return [(name, "\n".join(lines).strip("\n")) for name, lines in sections]


def blocks(section_text: str) -> list[Block]:
    """Split a section into paragraphs and list items, keeping each item's continuation
    lines, nested content and fenced code with it."""
    found: list[Block] = []
    current: list[str] = []
    current_atomic = False
    current_gap = False
    in_fence = False
    blank_seen = False

    def flush() -> None:
        nonlocal current
        text = "\n".join(current).strip("\n")
        if text.strip():
            found.append(Block(text, current_gap, current_atomic))
        current = []

    for line in section_text.split("\n"):
        if in_fence:
            current.append(line)
            if _FENCE_RE.match(line):
                in_fence = False
            continue
        if not line.strip():
            blank_seen = True
            if current:
                current.append(line)
            continue
        numbered = bool(_NUMBERED_ITEM_RE.match(line))
        bullet = bool(_BULLET_ITEM_RE.match(line))
        indented = line[:1] in (" ", "\t")
        # Unindented text right below a line continues it (Markdown "lazy" continuation);
        # after a blank line only indented text continues a list item.
        starts_new = (
            numbered
            or bullet
            or line.startswith("#")
            or not current
            or (blank_seen and not indented)
        )
        if starts_new:
            flush()
            current_gap = blank_seen and bool(found)
            current_atomic = numbered
        current.append(line)
        blank_seen = False
        if _FENCE_RE.match(line):
            in_fence = True
    flush()
    return found


def remediation_of(body: str) -> list[str]:
    """The numbered steps of a body's ``## Remediation`` section, without their numbers.

    A page without that section (a team's own, "## What we do", "## Fix") offers the
    numbered steps of its first section that has any: a numbered list is how runbooks write
    what to do, whatever the heading says.
    """
    found = sections(body)
    named = [text for name, text in found if name.lower() == "remediation"]
    for section_text in named or [text for _, text in found]:
        steps = [
            _NUMBERED_PREFIX_RE.sub("", block.text, count=1)
            for block in blocks(section_text)
            if block.atomic
        ]
        if steps or named:
            return steps
    return []
