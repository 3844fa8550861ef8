"""Reading a model's answer: the JSON in it, however the model wrapped it."""

from __future__ import annotations

import json
import re
from typing import Any

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"^```[A-Za-z]*\s*\n(.*?)\n?```$", re.DOTALL)


def strip_reasoning(content: str) -> str:
    """The answer without ``<think>...</think>`` blocks, stripped."""
    return _THINK.sub("", content).strip()


def extract_json(content: str) -> Any:
    """The JSON value in a model's answer: bare, in a ``` fence, or the outermost
    ``{...}`` of a chatty answer. ValueError if there is none."""
    text = strip_reasoning(content)
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    i, j = text.find("{"), text.rfind("}")
    if 0 <= i < j:
        return json.loads(text[i : j + 1])
    raise ValueError("no JSON object in the answer")
