"""Implementations under test: built-ins by name, anything else by ``package.module:attribute``.

The registry of implementation families: each file of ``implementations/families/`` (but ``_*.py``)
holds one family's ``PLUGIN`` (``implementations.protocol.Plugin``): its built-in names and the target
declarations they name, its options and their checks, its one-line description, its own-profile rule, its
replay environment, its subcommands.  A third party's family is found the same way through the ``ktc.plugins``
entry point group (``[project.entry-points."ktc.plugins"] mine = "mypackage.mine:PLUGIN"``), and a declaration
needs no family at all: ``--impl mypackage.mine:TARGET``.  ktc's generic core (ktc/cli, ktc/plugin) knows the
families only through this module.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import importlib.util
import inspect
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from .protocol import Capabilities, Command, Declaration, Implementation, Option, Plugin, Releases, SettingError

CORE = {"reference": "ktc.implementations.reference:ReferenceImplementation"}
ENTRY_POINTS = "ktc.plugins"  # a third party's families
_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


class ImplementationError(ValueError):
    """An --impl value that cannot be turned into an implementation."""


@functools.cache
def plugins() -> tuple[Plugin, ...]:
    """Every family's plug-in: ktc's own in file-name order (the order their options are checked in), then
    those the ``ktc.plugins`` entry points name, by name."""
    folder = Path(__file__).resolve().parent / "families"
    names = sorted(p.stem for p in folder.glob("*.py") if not p.stem.startswith("_"))
    own = tuple(importlib.import_module(f"{__name__}.families.{name}").PLUGIN for name in names)
    return own + tuple(third_party(own))


def third_party(own: Sequence[Plugin]) -> list[Plugin]:
    """The plug-ins of the ``ktc.plugins`` entry points; one that cannot be loaded, is not a ``Plugin`` or
    claims a name already taken is one line (``SettingError``)."""
    from importlib.metadata import entry_points

    taken, found = {*CORE, *(name for plugin in own for name in plugin.builtins)}, []
    for point in sorted(entry_points(group=ENTRY_POINTS), key=lambda p: p.name):
        plugin = loaded(point)
        clash = sorted(taken & set(plugin.builtins))
        if clash:
            raise SettingError(
                f"the ktc plug-in {point.name} ({point.value}) declares {', '.join(clash)}, a name already taken"
            )
        taken |= set(plugin.builtins)
        found.append(plugin)
    return found


def loaded(point) -> Plugin:
    try:
        plugin = point.load()
    except Exception as error:  # a third party's module that fails: say which, in one line
        raise SettingError(
            f"the ktc plug-in {point.name} ({point.value}) cannot be loaded: {type(error).__name__}: {error}"
        ) from None
    if not isinstance(plugin, Plugin):
        raise SettingError(f"the ktc plug-in {point.name} ({point.value}) is not a ktc.implementations.Plugin")
    return plugin


def builtins() -> dict[str, object]:
    """Every built-in ``--impl`` name -> its declaration (or ``module:attribute``)."""
    out: dict[str, object] = dict(CORE)
    for plugin in plugins():
        out.update(plugin.builtins)
    return out


def options() -> tuple[Option, ...]:
    """Every family's options, each once (families share some, e.g. ``--kafka-version``), in registry order."""
    seen: dict[str, Option] = {}
    for plugin in plugins():
        for option in plugin.options:
            if seen.setdefault(option.flag, option) is not option:
                raise RuntimeError(f"{option.flag} is declared twice, differently ({plugin.family})")
    return tuple(seen.values())


def commands() -> dict[str, tuple[Command, ...]]:
    """The subcommands families bring, by name, each with every family's part of it (registry order)."""
    out: dict[str, tuple[Command, ...]] = {}
    for plugin in plugins():
        for command in plugin.commands:
            out[command.name] = (*out.get(command.name, ()), command)
    return out


def releases() -> tuple[Releases, ...]:
    """The families' parts of ``ktc matrix`` (a target judged release after release), in registry order."""
    return tuple(plugin.releases for plugin in plugins() if plugin.releases is not None)


def run_command(name: str, args) -> int:
    """Every family's part of subcommand ``name``; the worst exit code.  When none was asked anything,
    one line saying what each needs (``SettingError``)."""
    parts = commands()[name]
    codes = [code for code in (part.run(args) for part in parts) if code is not None]
    if not codes:
        raise SettingError(f"ktc {name} needs " + ", or ".join(part.needs for part in parts if part.needs))
    return max(codes)


def plugin_for(spec: str, values: Mapping) -> Plugin | None:
    """The family whose target ``--impl spec`` is under these option values, or None (reference, a user's own)."""
    return next((plugin for plugin in plugins() if plugin.claims(spec, values)), None)


def values(given: Mapping | None = None, environ: Mapping[str, str] | None = None) -> dict:
    """Every family option's value by ``Option.name``: as given, else its default from its environment
    variable (``Option.env``), else None: how ``ktc run`` and the pytest plugin both read those defaults."""
    given, environ = given or {}, os.environ if environ is None else environ
    return {
        option.name: given.get(option.name)
        if given.get(option.name) not in (None, [])
        else (environ.get(option.env) or None if option.env else given.get(option.name))
        for option in options()
    }


def check(values: Mapping, specs: Sequence[str], requested_profile: str) -> list[str]:
    """``ktc run``'s checks of the families' options, then each target's own-profile rule: the lines to
    print.  Raises ``SettingError`` (one line) at the first problem."""
    lines = [
        option.check(values.get(option.name))
        for option in options()
        if option.check is not None and values.get(option.name) not in (None, [])
    ]
    taken = {option.flag for spec in specs if (plugin := plugin_for(spec, values)) for option in plugin.options}
    for option in options():
        if option.flag not in taken and values.get(option.name) not in (None, [], False):
            raise SettingError(f"{option.flag} is for {takers(option)}; none of this run's targets takes it")
    for spec in specs:
        plugin = plugin_for(spec, values)
        lines.append(plugin.own_profile(spec, values, requested_profile) if plugin is not None else None)
    return [line for line in lines if line]


def takers(option: Option) -> str:
    """The targets that take ``option``, as --impl names them: ``--impl kafka``, ``--impl kafka-<version>``."""
    names = [
        p.named or p.pattern_hint or next(iter(p.builtins), p.family)
        for p in plugins()
        if any(o.flag == option.flag for o in p.options)
    ]
    return "--impl " + ", ".join(dict.fromkeys(names)) if names else "no target"


def configure(specs: Sequence[str], values: Mapping) -> None:
    """Each family's session setup, before any implementation is built (Spark's master and settings)."""
    for plugin in plugins():
        plugin.configure(specs, values)


def replay_env(spec: str, values: Mapping, target: Mapping | None) -> dict:
    plugin = plugin_for(spec, values)
    return dict(plugin.replay_env(target)) if plugin is not None and target else {}


def summary(spec: str, values: Mapping, target: Mapping) -> str | None:
    plugin = plugin_for(spec, values)
    return plugin.summary(target) if plugin is not None else None


def load(spec: str, given: Mapping | None = None) -> Implementation:
    """A built-in name (``reference``, ``kafka-4``), a pattern (``kafka-3.7.2``) or ``package.module:attribute``
    -> an Implementation.

    The attribute may be a target declaration (``Declaration``), an instance, a class, or a zero-argument
    factory.  A declaration is built from the families' option values (``given``, completed by ``values``).
    """
    chosen = values(given)
    candidate = resolve(spec, chosen)
    if isinstance(candidate, Declaration) and not inspect.isclass(candidate):
        declared = candidate
        candidate = build(spec, lambda: declared.implementation(chosen), said=ValueError)
    elif inspect.isclass(candidate) or (callable(candidate) and not isinstance(candidate, Implementation)):
        candidate = build(spec, candidate)
    if not isinstance(candidate, Implementation):
        raise ImplementationError(
            f"{spec!r} is not an implementation: it needs name, version, capabilities() and run()"
        )
    return candidate


def resolve(spec: str, chosen: Mapping):
    """What ``--impl spec`` names under these option values: a declaration, an implementation or a factory."""
    patterned = from_pattern(spec)
    if patterned is not None:
        return patterned
    plugin, known = plugin_for(spec, chosen), builtins()
    target = plugin.builtins[spec] if plugin is not None and spec in plugin.builtins else known.get(spec, spec)
    if not isinstance(target, str):
        return target
    near = difflib.get_close_matches(spec, known, n=1, cutoff=0.85) if spec not in known else []
    if near and not importable(spec.partition(":")[0]):
        raise ImplementationError(f"unknown implementation {spec!r}: did you mean {near[0]}?")
    if not _SPEC.match(target):
        hints = "".join(f", or {p.pattern_hint}" for p in plugins() if p.pattern_hint)
        raise ImplementationError(
            f"unknown implementation {spec!r}: use a built-in ({', '.join(known)}{hints}) or package.module:attribute"
        )
    return _import(spec, target)


def build(spec: str, factory, said: type[Exception] | tuple = ()):
    """What a declaration or a factory makes; one that cannot build is a bad --impl (one line), not a crash.
    A declaration's settings say what is wrong in their own words (a ValueError naming the setting)."""
    try:
        return factory()
    except ImportError as error:
        raise ImplementationError(f"{spec!r} could not be constructed: {error}{extra_hint(error)}") from None
    except said as error:
        raise ImplementationError(f"--impl {spec}: {error}") from None
    except Exception as error:
        raise ImplementationError(f"{spec!r} could not be constructed: {type(error).__name__}: {error}") from None


def from_pattern(spec: str):
    """What a family builds for a name of its pattern (``kafka-3.7.2``: a declaration), or None."""
    for plugin in plugins():
        match = plugin.pattern.match(spec) if plugin.pattern is not None else None
        if match is not None:
            try:
                return plugin.from_pattern(match)
            except ImportError as error:
                raise ImplementationError(f"--impl {spec}: {error}{extra_hint(error)}") from None
            except ValueError as error:
                raise ImplementationError(f"--impl {spec}: {error}") from None
    return None


def expectation_files(spec: str, name: str, version: str, given: Mapping | None = None) -> list[Path]:
    """The expectations a declared target keeps in its own folder (``Declaration.expectations``, when that
    is not ktc's ``expectations/``, which the plugin reads anyway): ``<name>.toml`` and
    ``<name>-<version>.toml`` there, those that exist."""
    from ktc.paths import expectations_dir

    try:
        declared = resolve(spec, values(given))
    except ImplementationError:
        return []
    folder = declared.expectations if isinstance(declared, Declaration) else None
    if folder is None or Path(folder).resolve() == expectations_dir():
        return []
    return [path for path in (Path(folder) / f"{name}.toml", Path(folder) / f"{name}-{version}.toml") if path.exists()]


def users_modules_importable() -> None:
    """Like ``python -m``: the user's own modules (``--impl mine:Impl``) are importable from the current directory."""
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())


def importable(module_name: str) -> bool:
    """Whether ``--impl module:attribute`` names a module that can be found (a misspelt built-in such as
    ``client:kafkjs`` names none)."""
    users_modules_importable()
    try:
        return importlib.util.find_spec(module_name) is not None
    except (ImportError, ValueError):
        return False


def _import(spec: str, target: str):
    module_name, _, attribute = target.partition(":")
    users_modules_importable()
    try:
        obj = importlib.import_module(module_name)
    except ImportError as error:
        raise ImplementationError(
            f"cannot import {module_name!r} for --impl {spec!r}: {error}{extra_hint(error)}"
        ) from None
    except Exception as error:  # the module itself fails: say where, in one line
        raise ImplementationError(
            f"importing {module_name!r} for --impl {spec!r} raised {type(error).__name__}: {error}"
        ) from None
    try:
        return attribute_of(obj, attribute)
    except ImportError as error:  # a package that imports its implementation on first use (implementations.kafka)
        raise ImplementationError(
            f"cannot import {module_name!r} for --impl {spec!r}: {error}{extra_hint(error)}"
        ) from None
    except AttributeError:
        raise ImplementationError(f"module {module_name!r} has no attribute {attribute!r} (--impl {spec!r})") from None


def attribute_of(obj, attribute: str):
    for part in attribute.split("."):
        obj = getattr(obj, part)
    return obj


EXTRAS = {
    "pyspark": "spark",
    "pyarrow": "spark",
    "pandas": "spark",
    "numpy": "spark",
    "kafka": "broker",
    "docker": "broker",
    "testcontainers": "broker",
}  # a missing package -> the ktc extra that brings it


def extra_hint(error: ImportError) -> str:
    """``; pip install 'ktc[spark]'`` when the missing module comes with one of ktc's extras."""
    extra = EXTRAS.get((getattr(error, "name", None) or "").split(".")[0])
    return f" (install ktc's {extra} extra: pip install 'ktc[{extra}]')" if extra else ""


__all__ = [
    "Capabilities",
    "Command",
    "Declaration",
    "Implementation",
    "ImplementationError",
    "Option",
    "Plugin",
    "Releases",
    "SettingError",
    "builtins",
    "check",
    "commands",
    "configure",
    "expectation_files",
    "load",
    "options",
    "plugin_for",
    "plugins",
    "releases",
    "replay_env",
    "run_command",
    "summary",
    "values",
]
