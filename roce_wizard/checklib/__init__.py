"""Pure helpers for checks."""
