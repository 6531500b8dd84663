"""Run configs as files: ``load_config`` reads and validates a YAML file, ``parse_config`` a mapping,
``dump_config`` writes the resolved config (every default filled in) that each run saves;
``apply_overrides`` sets single fields from the command line (``crib train --set``).

Unknown fields and bad values are errors that name the field and what it accepts, e.g.
``configs/x.yaml: policy.arch: got 'cnn'; allowed: 'cards', 'mlp'``, and a key given twice in the
YAML is refused (YAML itself would silently keep the last one). The schema is ``training.config``.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from .config import RunConfig


def _describe(err: ValidationError, source: str) -> str:
    lines = []
    for e in err.errors():
        field = ".".join(str(p) for p in e["loc"]) or "(top level)"
        message = e["msg"].removeprefix("Value error, ")
        if e["type"] == "literal_error":
            expected = e.get("ctx", {}).get("expected", "")
            message = f"got {e['input']!r}; allowed: {expected}"
        elif e["type"] == "extra_forbidden":
            message = f"unknown field {e['loc'][-1]!r}; allowed: {_allowed_fields(e['loc'])}"
        elif e["type"] == "missing":
            message = "required field is missing"
        elif "input" in e and e["type"] not in ("value_error",):
            message = f"got {e['input']!r}; {message[0].lower()}{message[1:]}"
        lines.append(f"{field}: {message}")
    return f"{source}: invalid config\n  " + "\n  ".join(lines)


def _allowed_fields(loc: tuple) -> str:
    model: type[BaseModel] = RunConfig
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        annotation = model.model_fields[part].annotation
        inner = getattr(annotation, "__args__", (annotation,))[0]
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            model = inner
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
            model = annotation
    return ", ".join(model.model_fields)


def parse_config(data: Any, source: str = "config") -> RunConfig:
    """Validate a config mapping; raises ``ValueError`` naming each bad field and what it allows."""
    if not isinstance(data, dict):
        raise ValueError(f"{source}: a config must be a YAML mapping, got {type(data).__name__}")
    try:
        return RunConfig.model_validate(data)
    except ValidationError as err:
        raise ValueError(_describe(err, source)) from None


class _DuplicateKeyError(yaml.YAMLError):
    def __init__(self, key: Any, line: int, first_line: int) -> None:
        super().__init__(f"key {key!r} on line {line} is given twice (first on line "
                         f"{first_line}); keep one")


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping (YAML keeps the last one
    without a word). Keys that a merge (``<<: *anchor``) brings in may still be overridden."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        first_line: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                seen = key in first_line
            except TypeError:  # an unhashable key: the constructor below says so
                continue
            line = key_node.start_mark.line + 1
            if seen:
                raise _DuplicateKeyError(key, line, first_line[key])
            first_line[key] = line
        return super().construct_mapping(node, deep=deep)


def apply_overrides(data: Any, items: Sequence[str]) -> Any:
    """``data`` with each ``KEY=VALUE`` of ``items`` set (``crib train --set``): KEY is a dotted
    path of fields (``train.total_timesteps``; a list's item by its index, ``opponents.0.agent``),
    VALUE is read as YAML (``3``, ``true``, ``[a, b]``, ``{agent: expert}``). A section the file
    leaves out is created; whether the field exists and the value fits is checked with the rest of
    the config."""
    if not items:
        return data
    if not isinstance(data, dict):
        return data  # parse_config says what is wrong with the file
    data = copy.deepcopy(data)
    for item in items:
        key, sep, text = item.partition("=")
        parts = key.strip().split(".")
        if not sep or not all(parts):
            raise ValueError(f"--set {item!r}: give KEY=VALUE with KEY a dotted field path, e.g. "
                             f"--set train.total_timesteps=100000")
        try:
            value = yaml.load(text, Loader=_UniqueKeyLoader)
        except yaml.YAMLError as err:
            raise ValueError(f"--set {item!r}: the value is not valid YAML ({err})") from None
        _set(data, parts, value, item)
    return data


def _set(data: dict, parts: list[str], value: Any, item: str) -> None:
    node: Any = data
    for depth, part in enumerate(parts):
        where = ".".join(parts[:depth])
        key: Any = part
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise ValueError(f"--set {item!r}: {where} is a list of {len(node)}; give an "
                                 f"index from 0 to {len(node) - 1}")
            key = int(part)
        elif not isinstance(node, dict):
            raise ValueError(f"--set {item!r}: {where} is {node!r}, not a section")
        if depth == len(parts) - 1:
            node[key] = value
        else:
            if isinstance(node, dict) and node.get(key) is None:
                node[key] = {}
            node = node[key]


def load_config(path: Path, overrides: Sequence[str] = ()) -> RunConfig:
    """Read and validate a YAML run config, with ``overrides`` (``apply_overrides``) applied."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no config file at {path}")
    if path.is_dir():
        raise ValueError(f"--config: {path} is a folder; give a YAML file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"--config: cannot read {path} ({err})") from err
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)
    except _DuplicateKeyError as err:
        raise ValueError(f"{path}: {err}") from None
    except yaml.YAMLError as err:
        raise ValueError(f"{path}: not valid YAML ({err})") from err
    source = str(path) + (f" with --set {' '.join(overrides)}" if overrides else "")
    return parse_config(apply_overrides(data, overrides), source)


def dump_config(config: RunConfig) -> str:
    """The resolved config (every default filled in) as YAML."""
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False)
