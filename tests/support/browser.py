"""Headless Chromium for the HTML report's tests and screenshot script (Debian's
``chromium``; None where no browser is installed)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")
BROWSER = next((b for b in map(shutil.which, BROWSERS) if b), None)


def chromium(
    tmp_path: Path, *args: str, scrollbars: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run the browser on ``args``. Scrollbars are hidden (for screenshots)
    unless ``scrollbars``: a layout check wants the width a desktop browser's
    vertical scrollbar leaves to the page."""
    assert BROWSER is not None
    profile = tmp_path / "profile"
    command = [
        BROWSER,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        *(() if scrollbars else ("--hide-scrollbars",)),
        f"--user-data-dir={profile}",
        *args,
    ]
    env = {**os.environ, "HOME": str(tmp_path)}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=120, env=env, check=False
    )
