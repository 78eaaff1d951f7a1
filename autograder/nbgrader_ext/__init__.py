"""Everything that plugs into nbgrader: its steps, its hooks and plugins, the gradebook, feedback."""
