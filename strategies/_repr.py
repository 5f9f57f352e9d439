"""Readable reprs: pass a private strategy only the arguments the user changed."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any


def shown(public: Callable[..., object], **kwargs: Any) -> dict[str, Any]:
    """``kwargs`` minus those equal to ``public``'s defaults, so the repr shows only what was chosen."""
    params = inspect.signature(public).parameters
    return {name: value for name, value in kwargs.items() if not _same(value, params[name].default)}


def _same(value: object, default: object) -> bool:
    return value is default or (type(value) is type(default) and value == default)
