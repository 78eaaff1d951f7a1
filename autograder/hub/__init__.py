"""The course on a JupyterHub on this machine (``make hub`` / ``make hub-stop``).

:mod:`~autograder.hub.layout` names every file and account, :mod:`~autograder.hub.accounts` makes the
roster's system users, :mod:`~autograder.hub.environments` builds the students' and graders'
Pythons, :mod:`~autograder.hub.prepare` lays out the state folder (course copy, exchange, settings),
:mod:`~autograder.hub.control` starts and stops the hub, whose configuration is
``autograder/hub/jupyterhub_config.py``.
"""
