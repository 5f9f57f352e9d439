"""Readable reprs: pass a private strategy only the arguments the user changed."""
from __future__ import annotations

import inspect


def shown(public, **kwargs) -> dict:
    """``kwargs`` minus those equal to ``public``'s defaults, so the repr shows only what was chosen."""
    params = inspect.signature(public).parameters
    return {name: value for name, value in kwargs.items() if not _same(value, params[name].default)}


def _same(value, default) -> bool:
    return value is default or (type(value) is type(default) and value == default)
