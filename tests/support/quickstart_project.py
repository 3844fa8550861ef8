"""docs/quickstart.md's walk-through as a project on disk: its query file, its
``pyproject.toml`` and its test file, copied from the page's code blocks, and the
three help-centre pages its sample output comes from (``PAGES``)."""

from __future__ import annotations

import re
from pathlib import Path

QUICKSTART = Path(__file__).resolve().parents[2] / "docs" / "quickstart.md"

PAGES = {
    "returns.md": """\
# Returns and refunds

You can return any item within 30 days of delivery. Items must be unused and in
their original packaging, with the receipt or the order number.

To start a return, open the order in your account and choose "Return an item".
Print the prepaid label and drop the parcel at any post office.

Refunds are issued to the original payment method within five working days after
the parcel reaches our warehouse. Shipping costs are refunded only when the item
was faulty.
""",
    "shipping.md": """\
# Shipping

We ship to every country of the European Union. Orders placed before 2 pm leave
our warehouse on the same working day.

Delivery is free for orders above 50 euros. Below that, standard delivery costs
4.90 euros and express delivery 9.90 euros.

You receive a tracking link by email as soon as the parcel leaves the warehouse.
""",
    "account.md": """\
# Your account

You need an account to place an order. Your password must be at least twelve
characters long. After five wrong attempts your account is locked for fifteen
minutes.

You can change your email address and your password on the settings page.

To close your account, write to our support team. We delete your personal data
within 30 days, except invoices, which we must keep for ten years by law.
""",
}
"""The ``docs/`` folder of the walk-through."""

_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def section_blocks(text: str, heading: str) -> dict[str, str]:
    """Language -> code of the fenced blocks under ``heading`` (up to the next
    heading of any level)."""
    start = text.index(heading)
    end = text.index("\n#", start + 1)
    return {m.group(1): m.group(2) for m in _BLOCK.finditer(text[start:end])}


def console_blocks(text: str, heading: str) -> list[str]:
    """The ``console`` blocks under ``heading``, without their ``$`` line."""
    start = text.index(heading)
    end = text.index("\n### ", start + 1)
    return [
        "\n".join(line for line in m.group(2).splitlines() if not line.startswith("$"))
        for m in _BLOCK.finditer(text[start:end])
        if m.group(1) == "console"
    ]


def write_quickstart(root: Path, page: Path = QUICKSTART, k: int | None = None) -> Path:
    """The walk-through's project under ``root`` (its test with the marker's
    ``k`` replaced when given); returns the test file."""
    text = page.read_text(encoding="utf-8")
    queries = section_blocks(text, "### 2. Write down a few questions")["json"]
    toml = section_blocks(text, "### 3. Configure")["toml"]
    test = section_blocks(text, "### 4. Write a test")["python"]
    if k is not None:
        test = test.replace(
            "@pytest.mark.chunkeval(k=1)", f"@pytest.mark.chunkeval(k={k})"
        )
    (root / "pyproject.toml").write_text(toml, encoding="utf-8")
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "queries.jsonl").write_text(queries, encoding="utf-8")
    test_file = root / "tests" / "test_retrieval.py"
    test_file.write_text(test, encoding="utf-8")
    docs = root / "docs"
    docs.mkdir(exist_ok=True)
    for name, body in PAGES.items():
        (docs / name).write_text(body, encoding="utf-8")
    return test_file
