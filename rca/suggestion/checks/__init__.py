"""The measurements validation makes of a suggestion's text, one module each.

:mod:`.urls` (links a reader could follow), :mod:`.code_locations` (files and functions the
text places something in) and :mod:`.dimensions` (numbers that read as tensor sizes).
:mod:`rca.suggestion.validation` combines them into the stored verdict.

They use ``re`` (some need lookbehind), which is safe only because every one of them reads
at most :data:`MAX_SCAN_CHARS` characters: a valid answer is far shorter (200 + 400).
"""

from __future__ import annotations

#: Texts are scanned up to this length; a valid answer is far shorter (200 + 400 chars).
MAX_SCAN_CHARS = 4000
