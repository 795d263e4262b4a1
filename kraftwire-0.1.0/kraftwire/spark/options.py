"""The data source's option parsing shared by its readers and its sink: one error type, naming the option."""

from __future__ import annotations

__all__ = ["OptionError", "option_bool"]


class OptionError(ValueError):
    """An option of the ``kraftwire`` source or sink is missing or invalid; the message names the option."""


def option_bool(opts: dict, name: str, default: bool) -> bool:
    """The boolean option ``name`` (as the user spells it) from ``opts``, whose keys are lower-cased (Spark's option
    names are case-insensitive)."""
    v = opts.get(name.lower())
    if v is None:
        return default
    s = str(v).strip().lower()
    if s not in ("true", "false"):
        raise OptionError(f"kraftwire: option {name} must be true or false, not {v!r}")
    return s == "true"
