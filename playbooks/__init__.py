"""Built-in playbooks (data)."""
