"""The published documents the checks cite by a short name: "seed 000", "seed 001", "seed 004".

A check's documentation names its sources; three of them are long field reports the whole project
follows, cited as "seed NNN" to keep the check texts short. `explain` and docs/checks.md say what each
name stands for (pure: text in, the notes out), so a user of the package never meets a name it cannot
look up."""

from __future__ import annotations

import re

SEEDS: dict[str, str] = {
    "000": 'VMware, "RoCE SR-IOV Setup and Performance Study on vSphere 7.x" (technical paper, 7 September 2022: '
           "the BIOS / ESXi / vSphere / guest procedure for ConnectX cards the vsphere-sriov playbook follows; "
           "no stable public URL was found, search for the title)",
    "001": 'J. P. Kenny and C. D. Ulmer, "RoCE: Promising Technology for Ethernet as a High Performance Networking '
           'Fabric", Sandia National Laboratories SAND report (2019; the silent TCP fallback and the incast test), '
           "https://www.sandia.gov/research/publications/details/"
           "roce-promising-technology-for-ethernet-as-a-high-performance-networking-fab-2019-10-01/",
    "004": 'A. de la Fournière, "Setting up a RoCE cluster", Qarnot blog, 9 November 2022 (a bare-metal cluster: '
           "mlnx_qos, PFC on priority 3, DSCP trust, an Arista-like switch), "
           "https://blog.qarnot.com/setting-up-a-roce-cluster/",
}

_CITED = re.compile(r"\bseeds?\s+((?:0\d\d)(?:\s*(?:/|,|and)\s*0\d\d)*)", re.IGNORECASE)


def cited_seeds(text: str) -> list[str]:
    """The seed numbers `text` cites ("seed 000", "Seed 004's", "seeds 000/001"), in number order."""
    found = {n for m in _CITED.finditer(text) for n in re.findall(r"0\d\d", m.group(1))}
    return sorted(found)


def seed_notes(text: str) -> list[str]:
    """One line per seed `text` cites: `seed NNN: <title, author, date, URL>`."""
    return [f"seed {n}: {SEEDS.get(n, 'unknown (not a published source this project names)')}"
            for n in cited_seeds(text)]
