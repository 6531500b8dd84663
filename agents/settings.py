"""Settings written in a spec after a colon (``champion-search:sims=64``,
``rollouts:net=champion,opponent=rival``), read into a settings dataclass."""

from __future__ import annotations

from dataclasses import fields


def parse_settings(cls, name: str, text: str, example: str):
    """The settings dataclass ``cls`` from ``"key=value,..."`` (empty: its defaults), each value
    read by its field's type (str, int, float, bool); an unknown key or a bad value raises
    ``ValueError`` naming ``name`` and the key (``example``: a spec to show)."""
    types = {f.name: f.type for f in fields(cls)}
    values: dict[str, object] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or key not in types:
            raise ValueError(f"{name}: unknown setting {item!r}; settings are "
                             f"{', '.join(types)} (e.g. {example})")
        kind = types[key]
        try:
            if kind == "str":
                values[key] = raw.strip()
            elif kind == "bool":
                if raw.strip() not in ("0", "1", "true", "false"):
                    raise ValueError(raw)
                values[key] = raw.strip() in ("1", "true")
            else:
                values[key] = (int if kind == "int" else float)(raw)
        except ValueError:
            raise ValueError(f"{name}: setting {key} must be a {kind}, got {raw!r}") from None
    return cls(**values)
