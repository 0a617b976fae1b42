"""Switch-configuration secrets per vendor (roce_wizard.switch_secrets, through the bundle's Redactor).

Each line is written the way the vendor's configuration guide shows it (sources in the module docstring). For every
line: the secret is gone, what identifies the setting stays (the key number, the neighbor address, the user, the hash
type, trailing options), and the count the manifest reports equals the markers written.
"""

from __future__ import annotations

import json

import pytest

from roce_wizard.records.bundle import REDACTED, Redactor

# (vendor, config line(s), secrets that must go, text that must stay)
CASES = [
    # Arista EOS
    ("eos", "username admin privilege 15 role network-admin secret sha512 $6$Zk3pQm$EosHashValue01",
     ["$6$Zk3pQm$EosHashValue01"], ["username admin privilege 15 role network-admin secret sha512 "]),
    ("eos", "enable password sha512 $6$Enab1e$EosEnableHash", ["$6$Enab1e$EosEnableHash"], ["enable password sha512 "]),
    ("eos", "snmp-server community EosComm4412 ro", ["EosComm4412"], ["snmp-server community ", " ro"]),
    ("eos", "snmp-server user ops netops v3 localized f5717f444c3b auth sha EosAuthKey99 priv aes EosPrivKey99",
     ["EosAuthKey99", "EosPrivKey99"], ["snmp-server user ops netops v3 localized f5717f444c3b auth sha ", " priv aes "]),
    ("eos", "tacacs-server host 10.20.0.5 key 7 070C285F4D06EosTac", ["070C285F4D06EosTac"],
     ["tacacs-server host 10.20.0.5 key 7 "]),
    ("eos", "radius-server key 7 0207165218120EEosRad", ["0207165218120EEosRad"], ["radius-server key 7 "]),
    ("eos", "ntp authentication-key 17 md5 7 121A0C0411045D5679EosNtp", ["121A0C0411045D5679EosNtp"],
     ["ntp authentication-key 17 md5 7 "]),
    ("eos", "router bgp 65001\n   neighbor 10.0.0.2 password 7 Kh6xIj0aXgoEosBgp=\n   neighbor SPINES password 0 EosPgPw",
     ["Kh6xIj0aXgoEosBgp=", "EosPgPw"], ["   neighbor 10.0.0.2 password 7 ", "   neighbor SPINES password 0 "]),
    ("eos", "interface Ethernet1\n   ip ospf authentication-key 7 0822455D0AEosOspf\n"
            "   ip ospf message-digest-key 1 md5 7 0822455D0AEosMd5",
     ["0822455D0AEosOspf", "0822455D0AEosMd5"], ["ip ospf authentication-key 7 ", "ip ospf message-digest-key 1 md5 7 "]),
    ("eos", "   isis authentication key 7 0822455D0AEosIsis", ["0822455D0AEosIsis"], ["   isis authentication key 7 "]),
    ("eos", "   session shared-secret profile mgmt\n      secret 1 7 0822455D0AEosShared infinite infinite",
     ["0822455D0AEosShared"], ["      secret 1 7 ", " infinite infinite"]),
    ("eos", "   ospfv3 authentication ipsec spi 256 sha1 passphrase 7 0822455D0AEosV3", ["0822455D0AEosV3"],
     ["   ospfv3 authentication ipsec spi 256 sha1 passphrase 7 "]),
    # NVIDIA Onyx
    ("onyx", "username admin password 7 $6$FKA2ZoWB$OnyxUserHash", ["$6$FKA2ZoWB$OnyxUserHash"],
     ["username admin password 7 "]),
    ("onyx", "username monitor password 0 OnyxPlainPw1", ["OnyxPlainPw1"], ["username monitor password 0 "]),
    ("onyx", "snmp-server community OnyxComm77 ro", ["OnyxComm77"], ["snmp-server community ", " ro"]),
    ("onyx", "snmp-server user opsv3 v3 auth sha OnyxAuthKey1 priv aes-128 OnyxPrivKey1",
     ["OnyxAuthKey1", "OnyxPrivKey1"], ["snmp-server user opsv3 v3 auth sha ", " priv aes-128 "]),
    ("onyx", "radius-server host 10.1.1.1 key OnyxRadKey55", ["OnyxRadKey55"], ["radius-server host 10.1.1.1 key "]),
    ("onyx", "tacacs-server key 7 OnyxTacKey55", ["OnyxTacKey55"], ["tacacs-server key 7 "]),
    ("onyx", "ntp authentication-key 5 md5 OnyxNtpKey55", ["OnyxNtpKey55"], ["ntp authentication-key 5 md5 "]),
    ("onyx", "ldap bind-password OnyxBindPw55", ["OnyxBindPw55"], ["ldap bind-password "]),
    ("onyx", "router bgp 65001 vrf default neighbor 10.1.1.2 password OnyxBgpPw55", ["OnyxBgpPw55"],
     ["router bgp 65001 vrf default neighbor 10.1.1.2 password "]),
    # Dell OS10
    ("os10", "username admin password $6$rounds=656000$Qm$OS10UserHash role sysadmin priv-lvl 15",
     ["$6$rounds=656000$Qm$OS10UserHash"], ["username admin password ", " role sysadmin priv-lvl 15"]),
    ("os10", "enable password 0 OS10EnablePw priv-lvl 3", ["OS10EnablePw"], ["enable password 0 ", " priv-lvl 3"]),
    ("os10", "snmp-server community OS10Comm ro acl snmp-ro", ["OS10Comm"], ["snmp-server community ", " ro acl snmp-ro"]),
    ("os10", "snmp-server user os10u v3grp 3 auth sha OS10AuthPw priv aes OS10PrivPw",
     ["OS10AuthPw", "OS10PrivPw"], ["snmp-server user os10u v3grp 3 auth sha ", " priv aes "]),
    ("os10", "radius-server host 10.2.2.2 key 9 OS10RadiusEnc", ["OS10RadiusEnc"], ["radius-server host 10.2.2.2 key 9 "]),
    ("os10", "tacacs-server host 10.2.2.3 key 0 OS10TacPw", ["OS10TacPw"], ["tacacs-server host 10.2.2.3 key 0 "]),
    ("os10", "ntp authentication-key 3 md5 0 OS10NtpKey", ["OS10NtpKey"], ["ntp authentication-key 3 md5 0 "]),
    ("os10", "router bgp 65002\n neighbor 10.3.3.3\n  password 9 OS10BgpEnc\n  remote-as 65003",
     ["OS10BgpEnc"], [" neighbor 10.3.3.3\n  password 9 ", "  remote-as 65003"]),
    ("os10", " ip ospf message-digest-key 2 md5 0 OS10OspfKey", ["OS10OspfKey"], [" ip ospf message-digest-key 2 md5 0 "]),
    # NVIDIA Cumulus NVUE
    ("nvue", "nv set system aaa user cumulus hashed-password '$6$nvHash$NvUserHash'", ["$6$nvHash$NvUserHash"],
     ["nv set system aaa user cumulus hashed-password '"]),
    ("nvue", "nv set system aaa user ops password NvUserPw42", ["NvUserPw42"], ["nv set system aaa user ops password "]),
    ("nvue", "nv set system aaa radius server 192.168.0.254 secret NvRadSecret42", ["NvRadSecret42"],
     ["nv set system aaa radius server 192.168.0.254 secret "]),
    ("nvue", "cumulus@switch:~$ nv set system aaa tacacs server 5 host 192.168.0.30 secret NvTacSecret42",
     ["NvTacSecret42"], ["nv set system aaa tacacs server 5 host 192.168.0.30 secret "]),
    ("nvue", "nv set system snmp-server readonly-community NvRoComm42 access any", ["NvRoComm42"],
     ["nv set system snmp-server readonly-community ", " access any"]),
    ("nvue", "nv set system snmp-server username nvu auth-sha NvAuthKey42 encrypt-aes NvPrivKey42",
     ["NvAuthKey42", "NvPrivKey42"], ["nv set system snmp-server username nvu auth-sha ", " encrypt-aes "]),
    ("nvue", "nv set vrf default router bgp neighbor swp51 password NvBgpPw42", ["NvBgpPw42"],
     ["nv set vrf default router bgp neighbor swp51 password "]),
    ("nvue", "- set:\n    system:\n      snmp-server:\n        readonly-community:\n          NvYamlComm:\n"
             "            access:\n              any: {}\n        listening-address:\n          localhost: {}\n"
             "      aaa:\n        radius:\n          server:\n            192.168.0.254:\n              secret: NvYamlRad\n"
             "    vrf:\n      default:\n        router:\n          bgp:\n            neighbor:\n              swp51:\n"
             "                password: NvYamlBgp\n",
     ["NvYamlComm", "NvYamlRad", "NvYamlBgp"], ["            access:\n", "          localhost: {}", "192.168.0.254:", "swp51:"]),
    ("nvue", "base dc=example,dc=com\nbindpw NslcdBindPw42", ["NslcdBindPw42"], ["base dc=example,dc=com\nbindpw "]),
]

SONIC_CONFIG_DB = {
    "SNMP_COMMUNITY": {"SonicComm42": {"TYPE": "RO"}},
    "SNMP_USER": {"sonicu": {"SNMP_USER_AUTH_PASSWORD": "SonicAuthPw42", "SNMP_USER_ENCRYPTION_PASSWORD": "SonicPrivPw42",
                             "SNMP_USER_AUTH_TYPE": "SHA"}},
    "TACPLUS": {"global": {"passkey": "SonicTacKey42", "auth_type": "pap"}},
    "TACPLUS_SERVER": {"10.0.0.9": {"passkey": "SonicTacSrvKey42", "priority": "1"}},
    "RADIUS_SERVER": {"10.0.0.8": {"passkey": "SonicRadKey42"}},
    "NTP_KEY": {"42": {"type": "md5", "value": "SonicNtpKey42", "trusted": "yes"}},
}
SONIC_SECRETS = ["SonicComm42", "SonicAuthPw42", "SonicPrivPw42", "SonicTacKey42", "SonicTacSrvKey42", "SonicRadKey42",
                 "SonicNtpKey42"]


@pytest.mark.parametrize(("vendor", "config", "secrets", "kept"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_switch_secret_goes_and_the_rest_of_the_line_stays(vendor, config, secrets, kept):
    counts: dict[str, int] = {}
    out = Redactor(()).text(config, counts)
    for secret in secrets:
        assert secret not in out, f"{vendor}: {secret} survived in {out!r}"
    for part in kept:
        assert part in out, f"{vendor}: {part!r} lost in {out!r}"
    assert sum(counts.values()) == out.count(REDACTED) == len(secrets)


def test_ntp_key_number_stays_and_key_goes():
    """The reported bug: `ntp authentication-key 1 md5 SECRET` lost the 1 and kept the SECRET."""
    out = Redactor(()).text("ntp authentication-key 1 md5 NtpSecretValue", {})
    assert out == f"ntp authentication-key 1 md5 {REDACTED}"


def test_plain_prose_and_show_output_stay():
    text = ("BGP neighbor is 10.0.0.2, remote AS 65002\nntp authenticate\nEnter passphrase for key '/root/.ssh/id':\n"
            "snmp-server enable traps\nusername admin role network-admin nopassword\n")
    counts: dict[str, int] = {}
    assert Redactor(()).text(text, counts) == text and counts == {}


def test_sonic_config_db_as_recorded_text_keeps_its_layout():
    text = json.dumps(SONIC_CONFIG_DB, indent=4)
    counts: dict[str, int] = {}
    out = Redactor(()).text(text, counts)
    for secret in SONIC_SECRETS:
        assert secret not in out
    doc = json.loads(out)  # still JSON, same tables, same non-secret fields
    assert doc["SNMP_COMMUNITY"] == {REDACTED: {"TYPE": "RO"}}
    assert doc["NTP_KEY"]["42"] == {"type": "md5", "value": REDACTED, "trusted": "yes"}
    assert doc["TACPLUS_SERVER"]["10.0.0.9"]["priority"] == "1"
    assert sum(counts.values()) == out.count(REDACTED) == len(SONIC_SECRETS)


def test_sonic_config_db_as_a_json_member():
    counts: dict[str, int] = {}
    out = Redactor(()).value(SONIC_CONFIG_DB, counts)
    dumped = json.dumps(out)
    for secret in SONIC_SECRETS:
        assert secret not in dumped
    assert out["SNMP_USER"]["sonicu"]["SNMP_USER_AUTH_TYPE"] == "SHA"
    assert sum(counts.values()) == dumped.count(REDACTED) == len(SONIC_SECRETS)


def test_a_line_that_says_no_secret_is_kept_and_not_counted():
    # `Password: not set` redacted "not" (and counted a secret that was never there)
    counts: dict[str, int] = {}
    text = "Password: not set\nsecret = (null)\nToken: n/a\npassword: notreally\n"
    out = Redactor().text(text, counts)
    assert out.splitlines()[:3] == ["Password: not set", "secret = (null)", "Token: n/a"]
    assert "notreally" not in out
    assert counts == {"key=value secret": 1}
