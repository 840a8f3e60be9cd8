"""An exception's type as its platform writes it, with the module kept apart from it.

Sentry's ``module`` means different things per platform. In Python and on the JVM it is
the namespace of the class (``torch``, ``java.lang``), and the platform's own traceback
prints the two joined (``torch.OutOfMemoryError``, ``java.lang.IllegalStateException``),
so we join them too: an incident sent through Sentry then groups with one sent as
traceback text. Elsewhere it is not part of the name: .NET sends the assembly
(``System.Private.CoreLib, Version=4.0.0.0, ..., PublicKeyToken=...``) beside a type
that is already qualified, Go a package path beside ``*os.PathError``, native and Cocoa
an image. There the type is kept exactly as sent and the module goes in its own field.
A crash that names no type (a signal, a Mach exception, an NSError) takes the name from
``mechanism.meta``, as Sentry titles such an event.
"""

from __future__ import annotations

import re

from ingest.sentry.values import JsonObject, as_dict, text

MAX_SHORT = 255
# Python's traceback prints these types without their module; so do we.
_UNQUALIFIED_MODULES = {"builtins", "__builtin__", "__builtins__", "__main__", "exceptions"}
_NAMESPACE_PLATFORMS = {"python", "java"}
# Sentry's documented platforms whose ``module`` is not a namespace of the type.
_OTHER_PLATFORMS = {
    "as3", "c", "cfml", "cocoa", "csharp", "dart", "elixir", "go", "groovy", "haskell",
    "javascript", "native", "node", "objc", "perl", "php", "ruby", "swift",
}  # fmt: skip
_DOTTED_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")


def _from_mechanism(exception: JsonObject) -> str:
    meta = as_dict(as_dict(exception.get("mechanism")).get("meta"))
    for key, field in (("signal", "name"), ("mach_exception", "name"), ("ns_error", "domain")):
        if name := text(as_dict(meta.get(key)).get(field)).strip():
            return name
    return ""


def _joins_module(name: str, module: str, platform: str) -> bool:
    if not name or not module or module in _UNQUALIFIED_MODULES:
        return False
    if platform in _OTHER_PLATFORMS:
        return False
    if not (_DOTTED_NAME.fullmatch(module) and _DOTTED_NAME.fullmatch(name)):
        return False  # an assembly, a path or a package URL is not a namespace
    if platform not in _NAMESPACE_PLATFORMS and "." in name:
        return False  # already qualified by an SDK we do not know
    return not name.startswith(module + ".")


def exception_type(exception: JsonObject, platform: str) -> tuple[str, str]:
    """(type, module) of one entry of ``exception.values``; either may be ""."""
    name = text(exception.get("type")).strip() or _from_mechanism(exception)
    module = text(exception.get("module")).strip()
    if _joins_module(name, module, platform.lower()):
        name = f"{module}.{name}"
    return name[:MAX_SHORT], module[:MAX_SHORT]
