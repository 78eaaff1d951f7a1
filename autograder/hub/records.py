"""What a hub made on this machine: every system account (with its uid) and group (with its gid),
each course's exchange folder (device and inode), and the accounts it locked, in
``STATE/hub/accounts.json`` (root only).

This record, not a name or a GECOS mark, is what makes an account a hub's own: a hub never joins,
changes, kills or removes an account or group its record does not name, nor one whose uid or gid is
no longer the one it recorded (removed and made again by someone else). Two hubs on one machine
have two state folders, so two records: neither ever touches what the other made.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import stat
from dataclasses import dataclass, field
from pathlib import Path

from autograder.outputs.atomic import write_text


@dataclass
class Records:
    """The accounts, groups and folders one hub made (see the module docstring)."""

    path: Path
    users: dict[str, int] = field(default_factory=dict)
    groups: dict[str, int] = field(default_factory=dict)
    folders: dict[str, list[int]] = field(default_factory=dict)
    #: this hub's accounts it locked (dropped from every roster it serves) -> when (Unix time)
    locked: dict[str, float] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> Records:
        """The record at ``path`` (empty when the hub has made nothing yet)."""
        try:
            data = json.loads(Path(path).read_text())
        except FileNotFoundError:
            return cls(Path(path))
        except (OSError, ValueError) as exc:
            raise RuntimeError(f"{path}: the hub's record of its accounts cannot be read ({exc})") from None
        return cls(Path(path), users={str(k): int(v) for k, v in data.get("users", {}).items()},
                   groups={str(k): int(v) for k, v in data.get("groups", {}).items()},
                   folders={str(k): [int(n) for n in v] for k, v in data.get("folders", {}).items()},
                   locked={str(k): float(v) for k, v in data.get("locked", {}).items()})

    def save(self) -> None:
        write_text(self.path, json.dumps({"users": self.users, "groups": self.groups, "folders": self.folders,
                                          "locked": self.locked}, indent=1, sort_keys=True) + "\n")

    def user(self, login: str) -> pwd.struct_passwd | None:
        """``login``'s account when it exists and is this hub's (recorded, with the recorded uid)."""
        try:
            found = pwd.getpwnam(login)
        except KeyError:
            return None
        return found if self.users.get(login) == found.pw_uid else None

    def group(self, name: str) -> grp.struct_group | None:
        """The group ``name`` when it exists and is this hub's (recorded, with the recorded gid)."""
        try:
            found = grp.getgrnam(name)
        except KeyError:
            return None
        return found if self.groups.get(name) == found.gr_gid else None

    def made_user(self, login: str) -> None:
        self.users[login] = pwd.getpwnam(login).pw_uid
        self.save()

    def made_group(self, name: str) -> None:
        self.groups[name] = grp.getgrnam(name).gr_gid
        self.save()

    def made_folder(self, key: str, path: Path) -> None:
        """Record the folder ``path`` this hub made (by device and inode) under ``key``."""
        st = os.lstat(path)
        self.folders[key] = [st.st_dev, st.st_ino]
        self.save()

    def is_folder(self, key: str, path: Path) -> bool:
        """Whether ``path`` is the very folder recorded under ``key`` (a real folder, not a link)."""
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return False
        return stat.S_ISDIR(st.st_mode) and self.folders.get(key) == [st.st_dev, st.st_ino]
