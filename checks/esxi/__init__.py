"""Built-in checks, loaded by path (roce_wizard.catalog)."""
