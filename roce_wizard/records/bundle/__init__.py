"""The support bundle (`roce-wizard export`): collect.py (the run and what it used), secrets.py and redact.py
(nothing secret leaves), anonymize.py (pseudonyms, on request), render.py (summary.md/.html through
records.report), build.py (the archive, its manifest and the last check for leaks)."""

from roce_wizard.records.bundle.anonymize import Anonymizer
from roce_wizard.records.bundle.build import MANIFEST, Bundle, Member, build_bundle, check_writable, listing
from roce_wizard.records.bundle.collect import BundleError, find_run
from roce_wizard.records.bundle.redact import MIN_SECRET_LEN, REDACTED, Redactor
from roce_wizard.records.bundle.render import render_html, render_markdown
from roce_wizard.records.svg import incast_svg

__all__ = ["MANIFEST", "MIN_SECRET_LEN", "REDACTED", "Anonymizer", "Bundle", "BundleError", "Member", "Redactor",
           "build_bundle", "check_writable", "find_run", "incast_svg", "listing", "render_html", "render_markdown"]
