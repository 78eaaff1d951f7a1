"""Files for people and other systems: written atomically, CSVs made safe for spreadsheets, LMS exports."""
