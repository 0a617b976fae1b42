"""The Textual wizard (issue 6)."""
