"""The traffic mix: shares of events per path, given as `new=70,redelivered=25,pending=5`."""

from __future__ import annotations

import math

# The keys of paths.PATHS (paths.py checks that they are the same), written here so that a mix is read
# without the engine paths.py imports.
PATH_KEYS = ("new", "redelivered", "pending", "conflict", "dead_lettered", "expired")

DEFAULT_MIX = "new=70,redelivered=25,pending=5"


class MixError(ValueError):
    """A mix that cannot be read; the message is one line saying why and what is accepted."""


def parse_mix(text: str) -> dict[str, float]:
    """Shares per path, normalised to sum to 1."""
    shares: dict[str, float] = {}
    accepted = f"expected PATH=PERCENT[,PATH=PERCENT...] with PATH one of {', '.join(PATH_KEYS)}"
    for part in (piece.strip() for piece in text.split(",")):
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep or not name:
            raise MixError(f"mix part {part!r} is not PATH=PERCENT; {accepted}")
        if name not in PATH_KEYS:
            raise MixError(f"unknown path {name!r} in the mix; {accepted}")
        if name in shares:
            raise MixError(f"path {name!r} appears twice in the mix; {accepted}")
        try:
            share = float(value.strip().rstrip("%"))
        except ValueError:
            raise MixError(f"share {value.strip()!r} of {name} is not a number; {accepted}") from None
        if not math.isfinite(share) or share < 0:
            raise MixError(f"share of {name} is not a finite number of 0 or more ({share:g}); {accepted}")
        shares[name] = share
    total = sum(shares.values())
    if total <= 0:
        raise MixError(f"the mix's shares add up to {total:g}; {accepted}")
    return {name: share / total for name, share in shares.items()}
