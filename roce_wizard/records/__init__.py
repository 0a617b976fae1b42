"""The records layer: what a run leaves behind and what is made of it.

runlog (run directories, the event journal), ledger (the reboot ledger: a pure fold of the journal's events;
ledger_scope keeps it to the machines in front of us), report (findings to terminal text, JSON, Markdown and
HTML) and bundle/ (the support bundle: collect, redact, anonymize, render through report).
"""
