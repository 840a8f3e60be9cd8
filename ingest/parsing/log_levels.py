"""Log levels: the one vocabulary the log parser stores and the analysis ranks.

Services spell levels their own way (``WARN``, ``EMERG``, ``SEVERE``, ``50``); ingest
stores one canonical name per severity, and rca picks the entries that matter by rank
(the retrieval query from WARNING up, the prompt from ERROR up). Both read the names and
the ranking here, so a level the parser learns is ranked the same everywhere.
"""

from __future__ import annotations

# Canonical levels and their rank (Python logging's numbers; FATAL is CRITICAL by another
# name; TRACE sits below DEBUG as in Log4j and OpenTelemetry).
SEVERITY = {
    "TRACE": 5,
    "DEBUG": 10,
    "INFO": 20,
    "WARNING": 30,
    "ERROR": 40,
    "CRITICAL": 50,
    "FATAL": 50,
}

# Other spellings and the canonical level each is stored as.
ALIASES = {
    "WARN": "WARNING",
    "ERR": "ERROR",
    "CRIT": "CRITICAL",
    "EMERG": "CRITICAL",
    "ALERT": "CRITICAL",
    "SEVERE": "ERROR",
    "FINE": "DEBUG",
    "NOTICE": "INFO",
    "INFORMATION": "INFO",
}

# The level words recognised in a text line (an alternation for the line patterns): the
# canonical names and the aliases common in plain-text logs. The other aliases count only
# as a structured ``level`` field: in text they also start ordinary sentences ("Fine-tuning
# started", "Alert sent"). WARNING precedes WARN so the longer word wins.
TEXT_LEVELS = "CRITICAL|FATAL|ERROR|WARNING|WARN|INFO|DEBUG|TRACE|NOTICE|SEVERE"


def canonical_level(name: str) -> str:
    """The stored name of an upper-case level name; an unknown name stays as it is."""
    return ALIASES.get(name, name)


def levels_from(floor: str) -> frozenset[str]:
    """Every level name, canonical or alias, that ranks at ``floor`` or above."""
    rank = SEVERITY[floor]
    names = {name for name, value in SEVERITY.items() if value >= rank}
    return frozenset(names | {alias for alias, name in ALIASES.items() if name in names})


WARNING_AND_ABOVE = levels_from("WARNING")
ERROR_AND_ABOVE = levels_from("ERROR")
