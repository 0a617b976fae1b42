"""`python -m roce_wizard.cli` (lab up --detach re-executes itself so)."""

from roce_wizard.cli import main

main()
