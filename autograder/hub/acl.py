"""A course copy's folders share what is made in them with the course's graders (a default ACL).

The copy is ``2770 HUB-gr-ID:HUB-fg-ID``: what anyone makes in it gets the graders' group (setgid),
but with the maker's mode. An instructor or TA whose umask is 022 (most shells') would make folders
the grader account cannot write into (``make collect`` into ``submitted/LOGIN/``, a regrade) and
files it cannot replace in place. A POSIX default ACL on every folder of the copy, the same as
``setfacl -d -m u::rwx,g::rwx,g:HUB-fg-ID:rwx,m::rwx,o::---``, makes each new file and folder
readable and writable by the graders' group whatever the maker's umask (the kernel ignores the
umask where a default ACL holds) and closed to others; new folders inherit it. Written as the
kernel's extended attribute directly (``system.posix_acl_default``), so no ``acl`` package is needed.
"""

from __future__ import annotations

import os
import stat
import struct
from pathlib import Path

#: the attribute holding a folder's default ACL, and the version of its binary layout
DEFAULT_ACL = "system.posix_acl_default"
ACL_VERSION = 2
#: the kernel's tags of ACL entries (linux/posix_acl.h), and the id of entries that name no one
USER_OBJ, GROUP_OBJ, GROUP, MASK, OTHER = 0x01, 0x04, 0x08, 0x10, 0x20
NO_ID = 0xFFFFFFFF


def default_acl(gid: int) -> bytes:
    """The default ACL (the kernel's binary layout) giving the owner, the owning group and group
    ``gid`` read, write and enter, and others nothing."""
    entries = [(USER_OBJ, 7, NO_ID), (GROUP_OBJ, 7, NO_ID), (GROUP, 7, gid), (MASK, 7, NO_ID), (OTHER, 0, NO_ID)]
    return struct.pack("<I", ACL_VERSION) + b"".join(struct.pack("<HHI", tag, perm, who) for tag, perm, who in entries)


def share_with_group(top: Path, gid: int) -> int:
    """Give ``top`` and every folder under it (links not followed) :func:`default_acl` of ``gid``
    and the setgid bit (what is made in it gets the folder's group, not its maker's); returns how
    many folders. ``OSError`` when the file system has no ACLs (mounted ``noacl``)."""
    value = default_acl(gid)
    count = 0
    for folder, dirs, _ in os.walk(top):
        os.setxattr(folder, DEFAULT_ACL, value, follow_symlinks=False)
        os.chmod(folder, os.lstat(folder).st_mode & 0o7777 | stat.S_ISGID)
        count += 1
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
    return count


def shared_gid(folder: Path) -> int | None:
    """The group the default ACL of ``folder`` shares with, or ``None`` when it has none."""
    try:
        value = os.getxattr(folder, DEFAULT_ACL)
    except OSError:
        return None
    for offset in range(4, len(value), 8):
        tag, _, who = struct.unpack_from("<HHI", value, offset)
        if tag == GROUP:
            return who
    return None
