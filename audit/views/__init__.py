"""Audit screens: the auditor's queue, the discussion audit page with its editor, the admins'
review screens. Each module holds one screen and the actions posted from it."""
