"""Every check names the source of the syntax it emits (issue 12 item 2).

Each check's docstring carries a "Sources" paragraph (in "How to fix by hand", where `roce-wizard
explain` shows it) that names, for the commands its probes run and the lines its fix emits, a vendor
document, a corpus capture or a real binary. This meta-test keeps that honest in a simple way:

- the docstring has a Sources paragraph;
- every program that starts a command line of the "How to fix by hand" text (the indented example
  lines, a leading "Label:" such as "EOS:" or "Linux:" stripped) is named in that Sources paragraph.

It does not prove a citation right — a person reads the citation — but it fails the moment someone
adds a command to a fix without saying where its syntax comes from.
"""

from __future__ import annotations

import re

import pytest

from roce_wizard.catalog import load_catalog

CATALOG = load_catalog()

# where the Sources paragraph starts: "Sources:" (indented, inside How to fix by hand) or a
# "Sources (every command ...)" block (the switch checks)
SOURCES_RE = re.compile(r"^\s*Sources\b[^\n]*", re.MULTILINE)
# "EOS:   configure ...", "NetworkManager: nmcli ...", "ifcfg (RHEL 7): MTU=..." -> the part after
LABEL_RE = re.compile(r"^[A-Za-z][\w.()/-]{0,30}:\s+(?=\S)|^[A-Za-z][\w .,()/-]{0,30}:\s{2,}(?=\S)")
# a program: a bare name or a path (./x, /opt/x/y), no shell or prose punctuation in it
PROGRAM_RE = re.compile(r"^(?:\.{0,2}/)?[\w.+-]+(?:/[\w.+-]+)*$")
# the second word of a command line: an option, a placeholder, a subcommand / argument, a path
ARG_RE = re.compile(r"^(?:-|<|/|\$|\"|'|[\w.:,=+@-]+$)")
# English words that follow a prose word at the start of a wrapped sentence, never a program's argument
PROSE_SECOND = {"it", "the", "a", "an", "is", "are", "to", "of", "if", "when", "then", "that", "this", "and", "or",
                "on", "in", "for", "with", "by", "as", "at", "from", "not", "no", "be", "its", "their", "fix",
                "find", "never", "each", "largest", "see", "check", "make", "use", "run", "add", "set"}
# the tool's own commands (roce-wizard fix --reboot) are documented by the tool itself
OWN_TOOL = {"roce-wizard"}


def split_fix_text(how_to_fix: str) -> tuple[str, str | None]:
    """(the fix instructions, the Sources paragraph or None)."""
    match = SOURCES_RE.search(how_to_fix)
    if match is None:
        return how_to_fix, None
    return how_to_fix[: match.start()], how_to_fix[match.start():]


def _program(words: list[str]) -> str | None:
    """The program a command line starts with, or None for prose."""
    if words and words[0] in {"sudo", "$", "#"}:
        words = words[1:]
    if len(words) < 2 or not PROGRAM_RE.match(words[0]) or not re.match(r"^(?:\.?/)?[a-z]", words[0]):
        return None
    if words[0] in PROSE_SECOND or words[1].lower() in PROSE_SECOND or not ARG_RE.match(words[1]):
        return None  # a wrapped sentence, not a command
    name = words[0].rsplit("/", 1)[-1]
    return None if name in OWN_TOOL else name


def command_programs(fix_text: str) -> set[str]:
    """Program names that start the command lines of a fix text: the indented example lines, the
    "Label:  command" lines, and the `inline commands` of two words or more."""
    lines = [line for line in fix_text.splitlines() if line.strip()]
    if not lines:
        return set()
    # the first line lost its indentation when the section was cut out: the margin is the rest's
    margin = min((len(line) - len(line.lstrip()) for line in lines[1:]), default=0)
    programs: set[str] = set()
    for number, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        text = line.strip()
        labelled = LABEL_RE.match(text)
        if labelled:
            text = text[labelled.end():]
        if number == 0 or indent > margin or labelled:
            for part in re.split(r"\s(?:;|&&|/)\s", text):  # "a; b", "a && b", EOS "x / y / z"
                name = _program(part.split())
                if name:
                    programs.add(name)
        for span in re.findall(r"`([^`]+)`", line):
            name = _program(span.split())
            if name:
                programs.add(name)
    return programs


def test_command_programs_reads_commands_not_prose():
    text = (
        "Save the running config first:\n"
        "    /opt/mellanox/bin/mlxconfig -d <dev> -y set SRIOV_EN=1\n"
        "    EOS:   configure session roce-wizard / interface Ethernet3\n"
        "  NetworkManager: nmcli con mod <connection> 802-3-ethernet.mtu 9000\n"
        "                   powers it back on (or power it on in vCenter)\n"
        "    pyVmomi: vm.ReconfigVM_Task(vim.vm.ConfigSpec(\n"
        "        configSpec=vim.dvs.ConfigSpec(name='RoCE-DVS'))\n"
        "then reboot the host\n"
    )
    assert command_programs(text) == {"mlxconfig", "configure", "interface", "nmcli"}


@pytest.mark.parametrize("code", list(CATALOG))
def test_check_docstring_has_sources(code):
    _fix, sources = split_fix_text(CATALOG[code].doc["How to fix by hand"])
    assert sources is not None, (
        f"{code} ({CATALOG[code].path}): the docstring has no Sources paragraph in 'How to fix by hand' — "
        "name, for every command its probes run and every line its fix emits, the vendor document "
        "(title and URL), the corpus capture or the real binary its syntax comes from"
    )


@pytest.mark.parametrize("code", list(CATALOG))
def test_every_fix_command_is_named_in_sources(code):
    fix, sources = split_fix_text(CATALOG[code].doc["How to fix by hand"])
    if sources is None:
        pytest.fail(f"{code}: no Sources paragraph")
    missing = sorted(p for p in command_programs(fix) if not re.search(rf"(?<![\w-]){re.escape(p)}(?![\w-])", sources))
    assert not missing, f"{code}: the fix text runs {', '.join(missing)} but its Sources paragraph does not name them"
