"""The support bundle (`roce-wizard export`); build.py says what it holds and how secrets stay out."""

from roce_wizard.records.bundle.build import (
    MIN_SECRET_LEN,
    REDACTED,
    Anonymizer,
    Bundle,
    BundleError,
    Member,
    Redactor,
    build_bundle,
    check_writable,
    find_run,
    incast_svg,
    listing,
    render_html,
    render_markdown,
    results_from_events,
)

__all__ = ["MIN_SECRET_LEN", "REDACTED", "Anonymizer", "Bundle", "BundleError", "Member", "Redactor", "build_bundle",
           "check_writable", "find_run", "incast_svg", "listing", "render_html", "render_markdown",
           "results_from_events"]
