"""nbgrader settings for students (used by `nbgrader validate` and the Validate button)."""

c = get_config()  # noqa: F821 - provided by traitlets when nbgrader loads this file

# A check's message names the mistake in one sentence: show it whole, not cut at 90 characters.
c.Validator.width = 120
