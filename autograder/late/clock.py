"""How a lateness reads, and the due-date file the student bundle carries: standard library only.

``make student`` copies this file into the bundle (as ``clock.py``), where ``hand_in.py`` says how
late a hand-in is in the same words as the grading summary and the feedback.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from pathlib import Path

#: the bundle's file of due dates (per assignment, never per student) and the late policy in words
BUNDLE_FILE = "due-dates.json"


def lateness(seconds: float) -> str:
    """``seconds`` as people read a lateness: minutes under an hour (a part of a minute counts as
    one), hours and minutes under two days, then days and hours."""
    minutes = math.ceil(max(seconds, 0.0) / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


def show(t: datetime) -> str:
    """A due date (naive, UTC) as every page shows it."""
    return t.strftime("%Y-%m-%d %H:%M UTC")


def hand_in_lines(path: Path, now: datetime | None = None) -> list[str]:
    """What ``hand_in.py`` says about the due dates of the bundle's file at ``path`` (none without
    one): per assignment, its due date and, once past it, how late and what that costs."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    dues = data.get("due") if isinstance(data, dict) else None
    policy = data.get("policy") if isinstance(data, dict) and isinstance(data.get("policy"), str) else ""
    now = now or datetime.now(timezone.utc).replace(tzinfo=None)
    out = []
    for assignment, text in sorted(dues.items() if isinstance(dues, dict) else []):
        try:
            due = datetime.fromisoformat(text)
        except (TypeError, ValueError):  # a date no one wrote: the bundle's file edited by hand
            continue
        if now <= due:
            out.append(f"{assignment}: due {show(due)}; handed in now, it is on time")
        else:
            said = "; ".join(p for p in (policy, "an extension you were granted replaces this date") if p)
            out.append(f"{assignment}: due {show(due)}; handed in now, it is {lateness((now - due).total_seconds())} "
                       f"late ({said})")
    return out
