"""`roce-wizard export`: the support bundle of a recorded run (the sample cluster's real outputs replayed),
with canary secrets planted in the inventory, the environment, command outputs, events and a switch session
log. No canary may survive anywhere in the archive: member names, every member's bytes, the compressed file."""

from __future__ import annotations

import base64
import gzip
import html
import json
import os
import re
import tarfile
from collections import Counter
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from roce_wizard.records.bundle import REDACTED, Anonymizer, Redactor, build_bundle, incast_svg, render_html
from roce_wizard.cli import app
from tests.conftest import REPO

runner = CliRunner()
SAMPLE = REPO / "examples" / "sample-cluster"

PLAIN_PW = "Canary-Plain-Pw-7731"  # plaintext in the inventory
ENV_PW = "Canary-Env-Pw-9152"  # what {env: ESXI_PASSWORD} resolves to
TOKEN = "canaryTok3nA9f8e7d6c5b4a3"  # a secret-named option and a bearer token in an output
COMMUNITY = "CanaryComm4412"
KEY_BODY = base64.b64encode(b"canary-private-key-material-" * 6).decode()
PRIVATE_KEY = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY[:64]}\n{KEY_BODY[64:]}\n-----END OPENSSH PRIVATE KEY-----\n"
CANARIES = (PLAIN_PW, ENV_PW, TOKEN, COMMUNITY, KEY_BODY[:64], KEY_BODY[64:])


def _forms(secret: str) -> list[bytes]:
    """The ways a secret could be spelled inside a file: as is, JSON-escaped, HTML-escaped, base64."""
    return [f.encode() for f in {secret, json.dumps(secret)[1:-1], html.escape(secret)}] + [
        base64.b64encode(secret.encode())]


def bundle_blobs(path: Path) -> list[tuple[str, bytes]]:
    """Every member name and every member's bytes, plus the compressed and the uncompressed archive."""
    raw = path.read_bytes()
    blobs = [("<archive.tar.gz>", raw), ("<archive.tar>", gzip.decompress(raw))]
    with tarfile.open(path) as tar:
        for info in tar.getmembers():
            blobs.append((f"name:{info.name}", info.name.encode()))
            if info.isfile():
                blobs.append((info.name, tar.extractfile(info).read()))
    return blobs


def assert_no_canary(path: Path, canaries=CANARIES) -> None:
    for where, blob in bundle_blobs(path):
        for secret in canaries:
            for form in _forms(secret):
                assert form not in blob, f"a canary secret ({len(secret)} chars) survived in {where}"


@pytest.fixture
def recorded(tmp_path, monkeypatch):
    """A real run dir: doctor --replay of the sample cluster with a canary-laden inventory, then canaries
    planted where command outputs and fix steps put text (stderr, events, a switch session log)."""
    state = tmp_path / "state"
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(state))
    monkeypatch.setenv("ESXI_PASSWORD", ENV_PW)
    key_file = tmp_path / "id_canary"
    key_file.write_text(PRIVATE_KEY)
    inv = yaml.safe_load((SAMPLE / "inventory.yaml").read_text())
    inv["defaults"]["guest"] = {"username": "root", "password": PLAIN_PW, "key_file": str(key_file)}
    inv["targets"]["esxi"][0]["options"] = {"x_api_token": TOKEN, "connect_timeout": 5}
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(yaml.safe_dump(inv))
    result = runner.invoke(app, ["doctor", "-i", str(inventory), "--replay", str(SAMPLE / "recordings.yaml")])
    assert result.exit_code == 1, result.output  # the sample cluster has failures
    (run,) = [p for p in (state / "runs").iterdir() if p.is_dir()]

    record_path = run / "raw" / "esx-01" / "esxi_module_params.json"
    record = json.loads(record_path.read_text())
    record["stderr"] = (f"login as root password={PLAIN_PW} and {ENV_PW}\nAuthorization: Bearer {TOKEN}\n"
                        + PRIVATE_KEY)
    record_path.write_text(json.dumps(record, indent=1))
    with (run / "events.jsonl").open("a") as fh:
        fh.write(json.dumps({"type": "fix-step", "ts": 1.0, "target": "compute-01", "check": "RW405",
                             "description": "set MTU", "command": f"sshpass -p '{PLAIN_PW}' ip link",
                             "exit_status": 0, "output": f"token: {TOKEN}\n{PRIVATE_KEY}", "duration_s": 0.1,
                             "reboot": "none"}) + "\n")
    (run / "sessions").mkdir()
    (run / "sessions" / "s5232f-1.log").write_text(
        f"snmp-server community {COMMUNITY} ro\nusername admin password 0 {PLAIN_PW} role sysadmin\n"
        f"enable secret 5 {ENV_PW}\n")
    return run, inventory, tmp_path


def export(*args: str):
    return runner.invoke(app, ["export", *args])


def test_no_canary_secret_survives_anywhere_in_the_bundle(recorded):
    run, _inventory, tmp = recorded
    out = tmp / "bundle.tar.gz"
    result = export("--run", str(run), "-o", str(out))
    assert result.exit_code == 0, result.output
    assert "redacted:" in result.output and "private key" in result.output
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    assert_no_canary(out)
    with tarfile.open(out) as tar:
        names = {m.name.split("/", 1)[1] for m in tar.getmembers() if "/" in m.name}
        assert all(m.mode & 0o077 == 0 for m in tar.getmembers())
        doc = yaml.safe_load(tar.extractfile(f"roce-wizard-bundle-{run.name}/inventory.yaml"))
        manifest = json.load(tar.extractfile(f"roce-wizard-bundle-{run.name}/bundle.json"))
    for name in ("summary.md", "summary.html", "results.json", "events.jsonl", "versions.json",
                 "reboot-ledger.json", "inventory.yaml", "raw/esx-01/esxi_module_params.json",
                 "sessions/s5232f-1.log"):
        assert name in names
    # credentials by reference stay references; the plaintext one and the secret option are gone
    esx = doc["targets"]["esxi"][0]
    assert esx["password"] == {"env": "ESXI_PASSWORD"} and esx["options"]["x_api_token"] == "<redacted>"
    assert esx["options"]["connect_timeout"] == 5
    assert doc["targets"]["guest"][0]["password"] == "<redacted>"
    assert doc["targets"]["guest"][0]["key_file"].endswith("id_canary")
    counts = {f["path"]: f["redacted"] for f in manifest["files"]}
    assert counts["raw/esx-01/esxi_module_params.json"]["private key"] == 1
    assert counts["sessions/s5232f-1.log"]["config secret"] >= 1


def test_versions_come_from_the_recorded_outputs(recorded):
    run, inventory, _ = recorded
    bundle = build_bundle(run, inventory_path=inventory)
    versions = json.loads(next(m.data for m in bundle.members if m.name == "versions.json"))
    assert versions["hosts"]["esx-01"]["esxi_build"] == "VMware ESXi 7.0.2 build-17630552"
    assert versions["hosts"]["esx-01"]["firmware"] == "16.32.1010"
    assert versions["hosts"]["esx-01"]["driver"].startswith("nmlx5-core 4.21.71.101")
    assert versions["hosts"]["compute-01"]["ofed"] == "MLNX_OFED 5.4-3.0.3.0"
    assert versions["hosts"]["esx-04"] == {"kind": "esxi", "esxi_build": "unknown", "firmware": "unknown",
                                           "driver": "unknown", "ofed": "unknown"}  # SSH refused: nothing read
    summary = next(m.data for m in bundle.members if m.name == "summary.md").decode()
    assert "| esx-01 | esxi | VMware ESXi 7.0.2 build-17630552 |" in summary
    assert "esx-03: pending" in summary  # the ledger: SRIOV_EN waits in Next Boot (RW214)


def _originals(inventory: Path) -> list[str]:
    from roce_wizard.inventory import load_inventory

    inv = load_inventory(inventory)
    out = {"hpc.example"}
    for t in inv.targets:
        out |= {t.name, t.address, *(x for x in (t.host, t.vm) if x)}
        if t.roce.ip:
            out.add(t.roce.ip.split("/")[0])
    return sorted(out)


def test_anonymize_leaves_no_original_hostname_or_ip(recorded):
    run, inventory, tmp = recorded
    out = tmp / "anon.tar.gz"
    result = export("--run", str(run), "-o", str(out), "--anonymize")
    assert result.exit_code == 0, result.output
    assert_no_canary(out)
    originals = _originals(inventory)
    # the ip -j outputs name addresses no inventory does: those go too
    originals += ["10.10.1.11", "192.168.100.255", "127.0.0.1", "0c:42:a1:d3:98:46", "0c42a1d39846",
                  "0c42:a103:00d3:9846", "2D5RMM2", "4c4c4544-0044-3510-8052-b2c04f4d3232"]
    for where, blob in bundle_blobs(out):
        if where == "<archive.tar.gz>":
            continue
        text = blob.decode("utf-8", errors="replace")
        for original in originals:
            assert original not in text, f"{original} left in {where}"
    with tarfile.open(out) as tar:
        top = f"roce-wizard-bundle-{run.name}"
        doc = yaml.safe_load(tar.extractfile(f"{top}/inventory.yaml"))
        names = tar.getnames()
        gids = json.load(tar.extractfile(f"{top}/raw/guest-04/show_gids.json"))["stdout"]
    # consistent and readable: kinds stay visible, a guest's host is the pseudonym of that esxi target
    assert [t["name"] for t in doc["targets"]["esxi"]] == ["esxi-01", "esxi-02", "esxi-03", "esxi-04"]
    assert [t["host"] for t in doc["targets"]["guest"]] == ["esxi-01", "esxi-02", "esxi-03", "esxi-04"]
    assert f"{top}/raw/esxi-03/mlxconfig_query.json" in names
    ips = [t["roce"]["ip"] for t in doc["targets"]["guest"]]
    assert len({ip.rsplit(".", 1)[0] for ip in ips}) == 1 and len(set(ips)) == 4  # one subnet, four hosts
    # the IPv4-mapped GID carries the same pseudonym as the address it encodes
    guest4_ip = doc["targets"]["guest"][3]["roce"]["ip"].split("/")[0]
    assert guest4_ip in gids


def _findings(payload: dict) -> Counter:
    out: Counter = Counter()
    for f in payload["files"]:
        for finding in f["findings"]:
            out[(f["kind"], finding["check"], finding["status"])] += 1
    return out


def test_analyze_reads_a_bundle_back_with_the_same_findings(recorded):
    run, _inventory, tmp = recorded
    plain, anon = tmp / "plain.tar.gz", tmp / "anon.tar.gz"
    assert export("--run", str(run), "-o", str(plain)).exit_code == 0
    assert export("--run", str(run), "-o", str(anon), "--anonymize").exit_code == 0
    direct = runner.invoke(app, ["analyze", "--json", str(run)])
    from_bundle = runner.invoke(app, ["analyze", "--json", str(plain)])
    from_anon = runner.invoke(app, ["analyze", "--json", str(anon)])
    expected = json.loads(direct.stdout)
    got, got_anon = json.loads(from_bundle.stdout), json.loads(from_anon.stdout)
    assert _findings(expected) and _findings(got) == _findings(expected)
    assert _findings(got_anon) == _findings(expected)
    assert from_bundle.exit_code == direct.exit_code == from_anon.exit_code == 1
    # the bundle's own report files are not taken for tool outputs; its members are what the run dir holds
    # (results, raw records, session logs), each named by its path inside the bundle, never a temporary path
    assert all(f["path"].startswith(f"{plain}:roce-wizard-bundle-{run.name}/") for f in got["files"])
    inside = sorted(f["path"].split("/", 1)[1] for f in (x | {"path": x["path"].split(":", 1)[1]} for x in got["files"]))
    assert inside == sorted(Path(f["path"]).relative_to(run).as_posix() for f in expected["files"])
    assert "sessions/s5232f-1.log" in inside and "results.json" in inside
    summaries = sorted(x["summary"] for f in got["files"] for x in f["findings"])
    assert summaries == sorted(x["summary"] for f in expected["files"] for x in f["findings"])


def test_list_shows_files_and_redactions_and_writes_nothing(recorded, monkeypatch):
    run, _inventory, tmp = recorded
    work = tmp / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    result = export("--run", str(run), "--list")
    assert result.exit_code == 0, result.output
    assert f"roce-wizard-bundle-{run.name}.tar.gz" in result.output
    assert re.search(r"raw/esx-01/esxi_module_params\.json\s+redacted: .*private key", result.output)
    assert "summary.html" in result.output
    assert list(work.iterdir()) == []
    for secret in CANARIES:
        assert secret not in result.output
    written = export("--run", str(run))  # and without --list, the default name in the cwd
    assert written.exit_code == 0, written.output
    assert [p.name for p in work.iterdir()] == [f"roce-wizard-bundle-{run.name}.tar.gz"]


def test_bad_input_is_a_clear_error_with_exit_2(recorded, tmp_path, monkeypatch):
    run, _, tmp = recorded
    missing = export("--run", str(tmp / "no-such-run"))
    assert missing.exit_code == 2 and "no such run directory" in missing.output
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp / "empty-state"))
    none = export()
    assert none.exit_code == 2 and "no runs under" in none.output
    unwritable = export("--run", str(run), "-o", str(tmp / "no-dir" / "b.tar.gz"))
    assert unwritable.exit_code == 2 and "no such directory" in unwritable.output
    into_dir = export("--run", str(run), "-o", str(tmp))
    assert into_dir.exit_code == 2 and "is a directory" in into_dir.output
    bad_inventory = export("--run", str(run), "-i", str(tmp / "nope.yaml"), "-o", str(tmp / "x.tar.gz"))
    assert bad_inventory.exit_code == 2 and "no such file" in bad_inventory.output
    assert not (tmp / "x.tar.gz").exists()


def test_a_run_without_results_json_is_rebuilt_from_its_findings(recorded):
    run, inventory, _ = recorded
    (run / "results.json").unlink()
    bundle = build_bundle(run, inventory_path=inventory)
    results = json.loads(next(m.data for m in bundle.members if m.name == "results.json"))
    assert any(r["check"] == "RW206" and r["status"] == "fail" and r["target"] == "esx-03" for r in results["results"])
    assert any("rebuilt" in n for n in bundle.notes)


def test_redactor_forms():
    r = Redactor((ENV_PW,))
    counts: dict[str, int] = {}
    text = r.text("\n".join([
        f"url https://admin:{PLAIN_PW}@vc.example/sdk",
        f'{{"Password": "{PLAIN_PW}", "token": "{TOKEN}"}}',
        f"X-Auth-Token: {TOKEN}",
        f"snmp-server community {COMMUNITY} ro",
        f"nv set system snmp-server readonly-community {COMMUNITY}",
        f"tacacs-server host 10.0.0.9 key 7 {COMMUNITY}",
        f"free text with {ENV_PW} inside",
        "password: {env: ESXI_PASSWORD}",  # a reference stays
        "password: prompt",
        "no password for esx-01: the env var is unset",  # prose stays readable
    ]), counts)
    for secret in (PLAIN_PW, TOKEN, COMMUNITY, ENV_PW):
        assert secret not in text
    assert "password: {env: ESXI_PASSWORD}" in text and "password: prompt" in text
    assert "no password for esx-01: the env var is unset" in text
    assert "snmp-server community <redacted> ro" in text
    # a JSON value under a secret-named key goes whole, references and booleans stay
    assert r.value({"bmc_password": "hunter22", "password": "<env:BMC_PW>", "use_password": True}, counts) == \
        {"bmc_password": "<redacted>", "password": "<env:BMC_PW>", "use_password": True}


def test_anonymizer_keeps_versions_and_maps_each_spelling_alike():
    a = Anonymizer()
    a.seed_name("esx-01.hpc.example", "esxi")
    texts = ["nmlx5-core,4.21.71.101-1OEM.702.0.0.17473468,MEL", "min_nmlx5_version 4.21.71.101",
             "inet 192.168.100.11/24 brd 192.168.100.255", "Base MAC: 0c42a1d39846", "link/ether 0c:42:a1:d3:98:46",
             "GID fe80:0000:0000:0000:0e42:a1ff:fed3:9846 ::ffff:192.168.100.11", "host esx-01 at esx-01.hpc.example"]
    for t in texts:
        a.collect(t)
    a.freeze()
    out = [a.apply(t) for t in texts]
    assert "4.21.71.101" in out[0] and "4.21.71.101" in out[1]  # a version is not an address
    assert "192.168.100" not in out[2] and out[2].startswith("inet 10.0.")
    mac = out[4].split()[-1]
    assert out[3].split()[-1] == mac.replace(":", "") and mac != "0c:42:a1:d3:98:46"
    assert out[5].split()[-1] == "::ffff:" + out[2].split()[1].split("/")[0]
    assert out[6] == "host esxi-01 at esxi-01.site1.example.invalid"


def test_html_is_self_contained_with_tables_and_an_incast_plot():
    incast = [{"streams": n, "size": size, "gbps": gbps} for size, series in
              ((65536, (92.1, 93.0, 71.5, 40.2)), (1048576, (95.0, 95.2, 60.0, 22.0)))
              for n, gbps in zip((1, 2, 4, 8), series)]
    row = {"check": "RW605", "stage": "validate", "target": "compute-01", "status": "fail",
           "summary": "incast collapses at 4 streams <no PFC>", "details": {
               "table": {"columns": ["streams", "size", "Gb/s"], "rows": [[p["streams"], p["size"], p["gbps"]]
                                                                          for p in incast]},
               "incast": incast}}
    page = render_html({"run_id": "r1", "created": "now", "kind": "doctor"}, {"results": [row], "summary": {"fail": 1}},
                       {"hosts": {}}, {"hosts": {}})
    assert "<svg" in page and page.count("<polyline") == 2 and "64 KiB" in page and "1 MiB" in page
    assert "<th>streams</th>" in page and "<td>40.2</td>" in page
    assert "&lt;no PFC&gt;" in page  # text is escaped, never markup
    assert not re.search(r"<script|<link|<img|\bsrc=|url\(", page)
    assert [u for u in re.findall(r"https?://[^\s\"']+", page) if u != "http://www.w3.org/2000/svg"] == []
    assert incast_svg([]) == ""


def test_a_secret_that_survives_redaction_means_no_bundle(recorded, monkeypatch):
    """The last line of defence: a secret the patterns missed is found by value and nothing is written."""
    import roce_wizard.records.bundle as bundle_mod

    run, inventory, tmp = recorded
    monkeypatch.setattr(bundle_mod.Redactor, "text", lambda self, text, counts: text)  # a redactor that misses
    result = export("--run", str(run), "-i", str(inventory), "-o", str(tmp / "leaky.tar.gz"))
    assert result.exit_code == 2 and "refusing to write the bundle" in result.output
    assert not (tmp / "leaky.tar.gz").exists()
    assert os.listdir(tmp).count("leaky.tar.gz") == 0


def _source_markers(run: Path, name: str) -> int:
    """How many redaction markers a member's source already held (a recorded output may print one)."""
    source = run / name
    return source.read_text(encoding="utf-8").count(REDACTED) if source.is_file() else 0


def test_manifest_counts_are_true_for_every_file(recorded):
    """Each file's count in bundle.json is the number of values redacted in it: the markers it holds, less those
    its source held already. Before, inventory.yaml said nothing was redacted while its plaintext password and
    secret option had been."""
    run, inventory, _ = recorded
    bundle = build_bundle(run, inventory_path=inventory)
    manifest = json.loads(bundle.members[0].data)
    assert bundle.members[0].name == "bundle.json"
    by_name = {m.name: m for m in bundle.members}
    checked = 0
    for entry in manifest["files"]:
        if entry["path"].startswith("summary."):  # rendered from results.json after its redaction
            continue
        written = by_name[entry["path"]].data.decode("utf-8").count(REDACTED)
        assert sum(entry["redacted"].values()) == written - _source_markers(run, entry["path"]), entry["path"]
        checked += 1
    assert checked >= 10
    counts = {f["path"]: f["redacted"] for f in manifest["files"]}
    # four guests inherit the plaintext password, the esx-[01-04] entry its api_token
    assert counts["inventory.yaml"] == {"inventory secret": 4, "secret field": 4}


def test_a_secret_only_in_the_inventory_is_reported(tmp_path, monkeypatch):
    """The user-visible line: a run whose only secret is the inventory's plaintext password must not say
    'nothing needed redacting'."""
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path / "state"))
    inv = yaml.safe_load((SAMPLE / "inventory.yaml").read_text())
    inv["defaults"]["guest"] = {"username": "root", "password": PLAIN_PW}
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(yaml.safe_dump(inv))
    doctor = runner.invoke(app, ["doctor", "-i", str(inventory), "--replay", str(SAMPLE / "recordings.yaml")])
    assert doctor.exit_code == 1, doctor.output
    (run,) = [p for p in (tmp_path / "state" / "runs").iterdir() if p.is_dir()]
    listed = export("--run", str(run), "--list")
    assert listed.exit_code == 0, listed.output
    assert "nothing needed redacting" not in listed.output
    assert re.search(r"inventory\.yaml\s+redacted: 4 inventory secret", listed.output)  # four guests
    assert PLAIN_PW not in listed.output


PERFTEST = Path(__file__).parent / "data" / "perftest" / "blog-pve-ib_write_bw-bidir-100g-cpufreq-warning.txt"


def _gid_bytes(gid: str) -> str:
    import ipaddress

    return ":".join(f"{b:02d}" for b in ipaddress.IPv6Address(gid).packed)  # how perftest prints a GID


def test_anonymize_rewrites_perftests_decimal_gids_like_the_address_they_carry():
    """A real ib_write_bw output: its GIDs are 16 decimal bytes (…:255:255:192:168:06:116) and its command line
    names the peer in dotted form; both spellings of one address get one pseudonym, and the parser reads the
    anonymized output to the same numbers."""
    from roce_wizard.parsers.perf import parse_perftest

    text = PERFTEST.read_text(encoding="utf-8")
    a = Anonymizer()
    a.collect(text)
    a.freeze()
    out = a.apply(text)
    assert "192:168" not in out and "192.168.6.1" not in out and "192.168.06" not in out
    before, after = parse_perftest(text), parse_perftest(out)
    assert after["rows"] == before["rows"] and after["gid_index"] == before["gid_index"]
    remote, local = after["remote_gid_ipv4"], after["local_gid_ipv4"]
    assert remote and local and remote != before["remote_gid_ipv4"]
    assert f"--report_gbits {remote}" in out  # the dotted form on the command line: the same pseudonym
    assert remote.rsplit(".", 1)[0] == local.rsplit(".", 1)[0]  # one subnet stays one subnet


def test_anonymize_link_local_gids_follow_their_mac_in_results_and_events(recorded):
    """A MAC-derived (EUI-64) link-local GID in results.json (hex GID form) and in events.jsonl (perftest's decimal
    form) leaves no spelling of the MAC behind, and both spellings keep one pseudonym, derived from the MAC's."""
    run, inventory, _ = recorded
    mac, gid = "0c:42:a1:d3:98:46", "fe80:0000:0000:0000:0e42:a1ff:fed3:9846"
    results = json.loads((run / "results.json").read_text())
    results["results"][0]["observed"] = {"gid": gid, "gid_index": 0}
    (run / "results.json").write_text(json.dumps(results))
    with (run / "events.jsonl").open("a") as fh:
        fh.write(json.dumps({"type": "pair-measure", "ts": 2.0, "target": "compute-01",
                             "output": f" local address: LID 0000 QPN 0x008a\n GID: {_gid_bytes(gid)}\n"}) + "\n")
    bundle = build_bundle(run, inventory_path=inventory, anonymize=True)
    originals = [mac, mac.replace(":", ""), gid, "0e42:a1ff:fed3:9846", "e42:a1ff:fed3:9846", _gid_bytes(gid)]
    for m in bundle.members:
        text = m.data.decode("utf-8")
        for original in originals:
            assert original not in text, f"{original} left in {m.name}"
    observed = json.loads(next(m.data for m in bundle.members if m.name == "results.json"))["results"][0]["observed"]
    events = next(m.data for m in bundle.members if m.name == "events.jsonl").decode()
    assert f"GID: {_gid_bytes(observed['gid'])}" in events  # one pseudonym for both spellings
    pseudo_iid = observed["gid"].split(":")[4:]
    assert pseudo_iid[1].endswith("ff") and pseudo_iid[2].startswith("fe")  # still EUI-64 shaped
    pseudo_mac = f"{int(pseudo_iid[0][:2], 16) ^ 2:02x}:{pseudo_iid[0][2:]}:{pseudo_iid[1][:2]}:" \
                 f"{pseudo_iid[2][2:]}:{pseudo_iid[3][:2]}:{pseudo_iid[3][2:]}"
    assert any(pseudo_mac in m.data.decode() for m in bundle.members if m.name.startswith("raw/"))  # the MAC's own


def test_anonymize_replaces_home_directories_and_the_sites_directory_in_paths(recorded):
    run, inventory, tmp = recorded
    site = tmp / "paris-dc1"
    site.mkdir()
    moved = site / "inventory.yaml"
    inv = yaml.safe_load(inventory.read_text())
    inv["targets"]["esxi"][0]["options"]["x_datacenter"] = "ParisDC7"  # a vCenter datacenter names the site too
    moved.write_text(yaml.safe_dump(inv))
    with (run / "events.jsonl").open("a") as fh:
        fh.write(json.dumps({"type": "note", "ts": 3.0, "path": "/home/alice.m/sites/paris-dc1/inventory.yaml",
                             "log": "/Users/alice.m/roce/run.log", "other": "/home/bob/x",
                             "datastore": "/vmfs/volumes/ds1/ParisDC7/vm.vmx"}) + "\n")
    bundle = build_bundle(run, inventory_path=moved, anonymize=True)
    for m in bundle.members:
        for original in ("alice.m", "/home/bob", "/paris-dc1", "ParisDC7"):
            assert original not in m.data.decode("utf-8") and original not in m.name, f"{original} in {m.name}"
    journal = next(m.data for m in bundle.members if m.name == "events.jsonl")
    events = [json.loads(line) for line in journal.splitlines()]
    note = next(e for e in events if e.get("type") == "note")
    user = note["path"].split("/")[2]
    assert re.fullmatch(rf"/home/{user}/sites/site-\d\d/inventory\.yaml", note["path"]) and user.startswith("user-")
    assert note["log"] == f"/Users/{user}/roce/run.log"  # the same person, the same pseudonym
    assert note["other"].startswith("/home/user-") and note["other"] != f"/home/{user}/x"
    assert re.fullmatch(r"/vmfs/volumes/ds1/site-\d\d/vm\.vmx", note["datastore"])
    assert note["datastore"].split("/")[4] != note["path"].split("/")[4]  # two sites, two pseudonyms


def test_summary_lists_stages_in_the_order_doctor_prints_them():
    """One stage order for the terminal report and the bundle (records.report): a bare-metal host's `linux`
    stage comes between guest and switch in both, not after validate as the bundle's own stage list had it."""
    from roce_wizard.records.bundle import render_markdown

    rows = [{"check": c, "stage": s, "target": "h", "status": "pass", "summary": "ok"}
            for c, s in (("RW605", "validate"), ("RW501", "switch"), ("RW409", "linux"), ("RW101", "esxi"))]
    args = ({"run_id": "r1", "created": "now", "kind": "doctor"}, {"results": rows, "summary": {"pass": 4}},
            {"hosts": {}}, {"hosts": {}})
    order = ["esxi", "linux", "switch", "validate"]
    assert [ln[3:] for ln in render_markdown(*args).splitlines() if ln[3:] in order] == order
    assert re.findall(r"<h2>(esxi|linux|switch|validate)</h2>", render_html(*args)) == order
