"""Each hub owns its system accounts and groups (``autograder.hub.layout``, ``.records``, ``.accounts``).

No system account is touched here: the machine's users and groups are a stand-in
(:class:`Machine`) that ``useradd``, ``groupadd``, ``usermod``, ``userdel`` and ``groupdel`` change as
they would change ``/etc/passwd`` and ``/etc/group``. Two hubs of the same course on one machine
get names of their own, each makes and removes only what its record names, a login that is another
hub's account is refused in one line naming the roster line, and a roster row naming any hub's
grader account or group fails the roster.
"""

from __future__ import annotations

import grp
import os
import pwd
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autograder.course.ids import COURSE_ID
from autograder.hub import accounts, prepare
from autograder.hub.layout import (
    HUB_ID,
    MAX_COURSE_ID,
    MAX_SYSTEM_NAME,
    HubLayout,
    course_problem,
    grader_user,
    graders_group,
    new_hub_id,
    students_group,
    system_name_problem,
)
from autograder.hub.records import Records

#: what shadow's useradd and groupadd accept as a name (Debian's default, dots allowed)
LINUX_NAME = re.compile(r"[a-z_][a-z0-9_.-]*")
hub_ids = st.from_regex(HUB_ID, fullmatch=True)
course_ids = st.from_regex(r"[a-z0-9][a-z0-9._-]*", fullmatch=True).filter(lambda c: course_problem(c) is None)


@given(hub_ids, hub_ids, course_ids)
def test_two_hubs_never_share_a_system_name_and_every_name_fits_linux(one, other, course):
    """For every hub id and course id the hub accepts, the grader account and both groups are
    valid Linux names of at most 32 characters, distinct from each other, and none of one hub's
    is another hub's (the same course on two hubs included)."""
    names = {hub: [f(hub, course) for f in (grader_user, graders_group, students_group)] for hub in {one, other}}
    for made in names.values():
        assert len(set(made)) == 3, made
        for name in made:
            assert len(name) <= MAX_SYSTEM_NAME and LINUX_NAME.fullmatch(name), name
            assert system_name_problem(name), f"a roster could name {name}"
    if one != other:
        assert not set(names[one]) & set(names[other]), names


def test_the_longest_course_id_fits_and_a_longer_one_is_refused():
    hub = new_hub_id()
    assert HUB_ID.fullmatch(hub)
    longest = "c" * MAX_COURSE_ID
    assert course_problem(longest) is None and len(grader_user(hub, longest)) == MAX_SYSTEM_NAME
    assert "at most" in (course_problem(longest + "c") or "")


@pytest.mark.parametrize("named", [lambda: grader_user(new_hub_id(), COURSE_ID), lambda: graders_group("zz9abc", "ml"),
                                   lambda: students_group(new_hub_id(), "x"), lambda: f"grader-{COURSE_ID}"])
def test_a_roster_row_naming_a_grader_account_or_group_is_refused_with_its_line(named, tmp_path):
    """Any hub's grader account or group (and the grader-ID accounts of hubs before hub ids) is no
    one's login: the roster fails in one line naming its file, line and the login."""
    login = named()
    roster = tmp_path / "roster.csv"
    roster.write_text(f"id,first_name,last_name,email,role\nsa-ada,A,Ada,,student\n{login},G,G,,ta\n")
    with pytest.raises(ValueError) as refused:
        accounts.read_roster(roster)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(f"{roster}:3: id {login!r}: "), message


class Machine:
    """The machine's users and groups, as the account commands change them."""

    def __init__(self, homes: Path) -> None:
        self.homes = homes
        self.users: dict[str, int] = {}
        self.groups: dict[str, tuple[int, list[str]]] = {}
        self.next_id = 20000
        self.marks: dict[str, str] = {}
        self.ended: list[int] = []
        self.locked: set[str] = set()

    def getpwnam(self, login: str) -> pwd.struct_passwd:
        uid = self.users[login]
        mark = self.marks.get(login, "")
        return pwd.struct_passwd((login, "x", uid, uid, mark, str(self.homes / login), "/bin/bash"))

    def getgrnam(self, name: str) -> grp.struct_group:
        gid, members = self.groups[name]
        return grp.struct_group((name, "x", gid, list(members)))

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id

    def run(self, argv: list[str], input: str | None = None) -> None:
        command, name = argv[0], argv[-1]
        if command == "groupadd":
            assert name not in self.groups, argv
            self.groups[name] = (self._id(), [])
        elif command == "useradd":
            assert name not in self.users, argv
            self.users[name] = self._id()
            (self.homes / name).mkdir(parents=True)
            self.groups[argv[argv.index("--groups") + 1]][1].append(name)
        elif command == "usermod" and "--lock" in argv:
            assert name in self.users and argv[argv.index("--expiredate") + 1] == "1", argv
            self.locked.add(name)
        elif command == "usermod" and "--unlock" in argv:
            assert name in self.users and argv[argv.index("--expiredate") + 1] == "", argv
            self.locked.discard(name)
        elif command == "usermod":
            assert name in self.users, argv
            group = self.groups[argv[argv.index("--groups") + 1]][1]
            assert name not in group, f"joined again: {argv}"
            group.append(name)
        elif command == "gpasswd":
            assert argv[1] == "--delete", argv
            self.groups[name][1].remove(argv[2])
        elif command == "userdel":
            del self.users[name]
            for _, members in self.groups.values():
                if name in members:
                    members.remove(name)
        elif command == "groupdel":
            del self.groups[name]
        elif command != "chpasswd":
            raise AssertionError(f"unexpected command {argv}")

    def snapshot(self) -> tuple[dict, dict]:
        return dict(self.users), {g: (gid, sorted(m)) for g, (gid, m) in self.groups.items()}

    def members(self, group: str) -> list[str]:
        return sorted(self.groups[group][1])


@pytest.fixture
def machine(tmp_path, monkeypatch) -> Machine:
    m = Machine(tmp_path / "home")
    monkeypatch.setattr(pwd, "getpwnam", m.getpwnam)
    monkeypatch.setattr(grp, "getgrnam", m.getgrnam)
    monkeypatch.setattr(accounts, "_run", m.run)
    monkeypatch.setattr(accounts, "_end_processes", m.ended.append)
    return m


def _hub(tmp_path: Path, name: str, roster: str) -> tuple[HubLayout, list[accounts.Member]]:
    layout = HubLayout(state=tmp_path / name, envs=tmp_path / "envs")
    layout.ensure_hub_id()
    path = tmp_path / f"{name}.csv"
    path.write_text("id,first_name,last_name,email,role\n" + roster)
    return layout, accounts.read_roster(path)


def test_a_second_hub_of_the_same_course_makes_its_own_accounts_and_removes_only_those(machine, tmp_path):
    """The live course's hub has made its accounts; a second hub of the same course id (next term's,
    a test's) makes its own grader account and groups, refuses the live hub's student named in its
    roster in one line (and lets her nowhere near its hub), and on removal ends and removes only its
    own accounts: the live course's users, uids, groups and members are exactly as before."""
    live, live_roster = _hub(tmp_path, "live", "sa-ada,A,Ada,,student\nsa-ivy,I,Ivy,,instructor\n")
    assert accounts.ensure_accounts(live, COURSE_ID, live_roster, log=pytest.fail) == []
    machine.users["root-ish"] = 0  # an account of the machine, no hub's
    before = machine.snapshot()

    second, roster = _hub(tmp_path, "second", "sa-bob,B,Bob,,student\nsa-ada,A,Ada,,student\nroot-ish,R,R,,ta\n")
    assert second.hub_id != live.hub_id
    said: list[str] = []
    refused = accounts.ensure_accounts(second, COURSE_ID, roster, log=said.append)
    assert [m.login for m in refused] == ["sa-ada", "root-ish"]
    assert len(said) == 2 and all("\n" not in line for line in said), said
    assert said[0].startswith(f"{tmp_path / 'second.csv'}:3: id 'sa-ada': refused"), said
    assert [m.login for m in accounts.own_members(second, roster)] == ["sa-bob"]
    assert second.grader_user() not in before[0] and second.graders_group() not in before[1]
    with pytest.raises(RuntimeError, match="not an account of this hub"):
        accounts.set_password(second, "sa-ada", "guessed")

    made = Records.load(second.records).users
    assert sorted(made) == sorted(["sa-bob", second.grader_user()]), made
    accounts.remove_accounts(second, log=pytest.fail)
    assert machine.snapshot() == before
    assert sorted(machine.ended) == sorted(made.values()), "ended the processes of others than its own accounts"
    assert Records.load(second.records).users == {} and Records.load(second.records).groups == {}


def test_an_account_made_again_by_someone_else_is_no_longer_the_hubs(machine, tmp_path):
    """The record holds the uid: a recorded login removed and made again by someone else (another
    hub, the machine's admin) is neither joined nor removed; the hub says so in one line."""
    hub, roster = _hub(tmp_path, "hub", "sa-cat,C,Cat,,student\n")
    accounts.ensure_accounts(hub, COURSE_ID, roster, log=pytest.fail)
    machine.run(["userdel", "sa-cat"])
    machine.users["sa-cat"] = 31337  # someone else's account now
    said: list[str] = []
    assert [m.login for m in accounts.ensure_accounts(hub, COURSE_ID, roster, log=said.append)] == ["sa-cat"]
    accounts.remove_accounts(hub, log=said.append)
    assert machine.users == {"sa-cat": 31337} and 31337 not in machine.ended
    assert any(line.startswith("sa-cat: no longer this hub's account") for line in said), said


def test_a_grader_account_name_taken_by_someone_else_stops_the_start(machine, tmp_path):
    """The course cannot run on an account the hub did not make: the start fails naming it."""
    hub, roster = _hub(tmp_path, "hub", "sa-dan,D,Dan,,student\n")
    machine.users[hub.grader_user()] = 4242
    with pytest.raises(accounts.ForeignAccount, match=re.escape(hub.grader_user())):
        accounts.ensure_accounts(hub, COURSE_ID, roster, log=pytest.fail)
    assert machine.users[hub.grader_user()] == 4242 and "sa-dan" not in machine.users


def test_the_exchange_folder_this_hub_made_stays_whoever_owns_it_now(tmp_path):
    """The hub's own exchange folder (the very folder its record names) is never taken for a
    squatter's, though its owner's uid is no longer the grader account's (the account was removed
    and made again): it keeps the released assignment and every submission."""
    layout = HubLayout(state=tmp_path, envs=tmp_path / "envs")
    layout.hub.mkdir()
    records = Records.load(layout.records)
    ours = layout.course_exchange(COURSE_ID)
    (ours / "inbound" / "sa-ada+attention+2026").mkdir(parents=True)
    records.made_folder(f"exchange/{COURSE_ID}", ours)
    os.chown(ours, 65534, 65534)
    said: list[str] = []
    prepare._refuse_squatter(layout, ours, "root", said.append,
                             made=Records.load(layout.records).is_folder(f"exchange/{COURSE_ID}", ours))
    assert (ours / "inbound" / "sa-ada+attention+2026").is_dir() and said == []
    # a folder of the same name made anew by someone else in its place is not the recorded one
    ours.rename(tmp_path / "elsewhere")
    ours.mkdir()
    assert not Records.load(layout.records).is_folder(f"exchange/{COURSE_ID}", ours)


def test_a_state_folder_from_before_hub_ids_keeps_its_own_old_accounts_only(machine, tmp_path):
    """A hub's state folder made before hub ids: its first start with an id keeps the accounts its
    roster names that carry the old mark (made for it then), refuses an unmarked one in one line,
    makes its own grader account, and leaves the old grader account alone."""
    older = (("sa-old", accounts.OLDER_MARK), ("sa-own", "Somebody"), (f"grader-{COURSE_ID}", accounts.OLDER_MARK))
    for login, mark in older:
        machine.users[login] = machine._id()
        machine.marks[login] = mark
        (machine.homes / login).mkdir(parents=True)
    before = dict(machine.users)
    hub, roster = _hub(tmp_path, "older", "sa-old,O,Old,,student\nsa-own,S,Own,,student\n")
    said: list[str] = []
    accounts.adopt_older_accounts(hub, roster, log=said.append)
    refused = accounts.ensure_accounts(hub, COURSE_ID, roster, log=said.append)
    assert [m.login for m in refused] == ["sa-own"] and len(said) == 2, said
    assert Records.load(hub.records).users["sa-old"] == before["sa-old"]
    accounts.remove_accounts(hub, log=pytest.fail)
    assert machine.users == {k: v for k, v in before.items() if k != "sa-old"}


def test_make_hub_says_in_one_line_which_accounts_it_made_and_changed(machine, tmp_path):
    """``make hub`` prints one line per course of what it did to the accounts: those made (with their
    role), those added to the course's group, how many stayed as they were; nothing made, it says so."""
    hub, roster = _hub(tmp_path, "hub", "sa-ada,A,Ada,,student\nsa-ivy,I,Ivy,,instructor\n")
    said: list[str] = []
    accounts.ensure_accounts(hub, COURSE_ID, roster, log=pytest.fail, report=said.append)
    assert said == [f"{COURSE_ID}: accounts made 2: sa-ada (student), sa-ivy (instructor); 0 unchanged"]
    said.clear()
    accounts.ensure_accounts(hub, COURSE_ID, roster, log=pytest.fail, report=said.append)
    assert said == [f"{COURSE_ID}: accounts made none; 2 unchanged"]
    said.clear()
    _, more = _hub(tmp_path, "more", "sa-ada,A,Ada,,ta\nsa-bob,B,Bob,,student\n")
    more_hub = HubLayout(state=hub.state, envs=hub.envs)  # the same hub, a second course naming ada again
    accounts.ensure_accounts(more_hub, "sa-other", more, log=pytest.fail, report=said.append)
    assert said == ["sa-other: accounts made 1: sa-bob (student); added to the course's group 1: sa-ada (ta); "
                    "0 unchanged"], said
    accounts.remove_accounts(hub, log=pytest.fail)


def _roster(tmp_path: Path, name: str, lines: str) -> list[accounts.Member]:
    path = tmp_path / name
    path.write_text("id,first_name,last_name,email,role\n" + lines)
    return accounts.read_roster(path)


def test_a_roster_change_locks_the_dropped_re_enables_the_returning_and_says_each_in_a_line(machine, tmp_path):
    """Three students, then ben dropped and dan enrolled late: dan is made, ben leaves the students'
    group (the exchange folder's), is locked (password and expiry), recorded as locked and has his
    processes ended, his home kept; a second course where ben stays a TA keeps him unlocked there
    until that roster drops him too. Re-added, he is re-enabled and joins again. Each change is one
    :class:`accounts.Change` line; an unchanged roster changes nothing; an account the hub did not
    make that someone put in its group is neither removed nor locked."""
    hub, _ = _hub(tmp_path, "hub", "")
    ml = "ml-2027"
    first = _roster(tmp_path, "a.csv", "sa-ada,A,Ada,,student\nsa-ben,B,Ben,,student\nsa-cat,C,Cat,,student\n")
    other = _roster(tmp_path, "b.csv", "sa-ben,B,Ben,,ta\n")
    made = accounts.apply_rosters(hub, {COURSE_ID: first, ml: other}, log=pytest.fail)
    assert {(c.login, c.what) for c in made} >= {("sa-ada", "made"), ("sa-ben", "made"), ("sa-ben", "joined")}
    assert all("\n" not in str(c) and str(c).startswith(f"account {c.login}: {c.what}") for c in made), made
    assert accounts.apply_rosters(hub, {COURSE_ID: first, ml: other}, log=pytest.fail) == []
    machine.users["someone"] = 4242  # the machine's admin put an account of her own in the hub's group
    machine.groups[hub.students_group()][1].append("someone")
    ben = machine.users["sa-ben"]
    (machine.homes / "sa-ben" / "work.ipynb").write_text("his work")

    later = _roster(tmp_path, "a2.csv", "sa-ada,A,Ada,,student\nsa-cat,C,Cat,,student\nsa-dan,D,Dan,,student\n")
    changes = accounts.apply_rosters(hub, {COURSE_ID: later, ml: other}, log=pytest.fail)
    assert [(c.login, c.what) for c in changes] == [("sa-dan", "made"), ("sa-ben", "left")], changes
    assert machine.members(hub.students_group()) == ["sa-ada", "sa-cat", "sa-dan", "someone"]
    assert "sa-ben" not in machine.locked and ben in machine.ended  # still ml's TA; his processes ended
    machine.ended.clear()
    changes = accounts.apply_rosters(hub, {COURSE_ID: later, ml: []}, log=pytest.fail)
    assert [(c.login, c.what) for c in changes] == [("sa-ben", "left"), ("sa-ben", "locked")], changes
    assert machine.locked == {"sa-ben"} and machine.ended == [ben] and "sa-ben" in Records.load(hub.records).locked
    assert machine.users["sa-ben"] == ben and (machine.homes / "sa-ben" / "work.ipynb").read_text() == "his work"
    assert accounts.apply_rosters(hub, {COURSE_ID: later, ml: []}, log=pytest.fail) == []

    back = _roster(tmp_path, "a3.csv", "sa-ada,A,Ada,,student\nsa-ben,B,Ben,,student\n")
    changes = accounts.apply_rosters(hub, {COURSE_ID: back, ml: []}, log=pytest.fail)
    assert {(c.login, c.what) for c in changes} == {("sa-ben", "joined"), ("sa-ben", "re-enabled"),
                                                    ("sa-cat", "left"), ("sa-dan", "left"),
                                                    ("sa-cat", "locked"), ("sa-dan", "locked")}, changes
    assert machine.locked == {"sa-cat", "sa-dan"} and "sa-ben" not in Records.load(hub.records).locked
    assert machine.users["someone"] == 4242 and "someone" in machine.members(hub.students_group())
    assert 4242 not in machine.ended and hub.grader_user() not in machine.locked
    accounts.remove_accounts(hub, log=pytest.fail)
    assert Records.load(hub.records).locked == {}


def test_a_dropped_student_stays_in_the_course_copys_class_with_her_lms_ids(tmp_path):
    """The course copy's roster.csv (which the LMS exports read) keeps a student the hub's roster
    dropped, with her names and ids as they were: her grades stay in the gradebook, and the exports
    must still match her row; a student still listed takes the roster's new values."""
    import csv
    import io

    layout = HubLayout(state=tmp_path, envs=tmp_path / "envs")
    layout.rosters.mkdir(parents=True)
    earlier = tmp_path / "roster.csv"
    earlier.write_text("id,first_name,last_name,email,lms_user_id,sis_user_id\n"
                       "ann,Ann,Lee,old@x.edu,L1,S1\nbob,Bob,Roe,bob@x.edu,L2,S2\n")
    layout.roster("c1").write_text("id,first_name,last_name,email,role,sis_user_id\n"
                                   "ann,Ann,Lee,ann@x.edu,student,S1\ncat,Cat,Ode,,student,S3\nivy,I,V,,ta,\n")
    rows = list(csv.DictReader(io.StringIO(prepare.class_roster(layout, "c1", kept=earlier))))
    assert [r["id"] for r in rows] == ["ann", "cat", "bob"]
    assert rows[0]["email"] == "ann@x.edu" and rows[1]["lms_user_id"] == ""
    assert rows[2] == {"id": "bob", "first_name": "Bob", "last_name": "Roe", "email": "bob@x.edu",
                       "lms_user_id": "L2", "sis_user_id": "S2"}


def test_course_rosters_from_the_command_line_are_id_equals_roster_or_refused_in_one_line():
    """make hub and make hub-roster read ``--course ID=ROSTER`` the same way (one function); any other
    form is one line naming it."""
    from autograder.errors import RefusedInput

    assert accounts.course_rosters(Path("r.csv"), ["ml-2027=/srv/ml.csv", " db =x.csv"]) == {
        COURSE_ID: Path("r.csv"), "ml-2027": Path("/srv/ml.csv"), "db": Path("x.csv")}
    assert accounts.course_rosters(None, []) == {}
    for bad in ("ml-2027", "ml-2027="):
        with pytest.raises(RefusedInput, match=f"--course '{bad}': give ID=ROSTER"):
            accounts.course_rosters(None, [bad])
