"""The secrets a bundle must not carry, by value: what the inventory resolves on this machine (plaintext
passwords, env vars, keyring entries, secret-named options, SSH key lines, a dotenv beside it), and the
inventory itself as a document with credentials as references only."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from roce_wizard.records.bundle.redact import _SECRET_ENV, _SECRET_KEY, REDACTED, _is_reference


def _key_lines(path: Path) -> list[str]:
    """The body lines of an SSH private key file: if one ever shows up on its own it is redacted too."""
    try:
        text = path.expanduser().read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    if "PRIVATE KEY" not in text:
        return []
    return [ln.strip() for ln in text.splitlines() if len(ln.strip()) >= 16 and not ln.startswith("-----")]


def _dotenv_values(path: Path) -> list[str]:
    out = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return out
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        _, _, value = line.removeprefix("export ").partition("=")
        try:
            parts = shlex.split(value)
        except ValueError:
            parts = [value]
        if parts and parts[0]:
            out.append(parts[0])
    return out


def secret_values(inventory: Any | None, inventory_path: Path | None) -> list[str]:
    """Every secret value this machine can resolve for the inventory, to redact by value."""
    from roce_wizard.model import SecretSource  # noqa: PLC0415

    values: list[str] = []
    for target in getattr(inventory, "targets", []) or []:
        ref = target.credentials.password
        if ref is not None:
            if ref.source is SecretSource.PLAINTEXT and ref.value:
                values.append(ref.value)
            elif ref.source is SecretSource.ENV and os.environ.get(ref.name):
                values.append(os.environ[ref.name])
            elif ref.source is SecretSource.KEYRING:
                values.extend(_keyring_value(ref.name))
        if target.credentials.key_file:
            values.extend(_key_lines(Path(target.credentials.key_file)))
        values.extend(_secret_options(target.options))
    # credentials in the environment under a secret-looking name (ESXI_PASSWORD, VC_TOKEN, …)
    values.extend(v for k, v in os.environ.items() if _SECRET_ENV.search(k) and v)
    if inventory_path is not None:  # a dotenv beside the inventory (the practice lab's lab.env is one)
        for name in ("lab.env", ".env"):
            values.extend(_dotenv_values(inventory_path.parent / name))
    return values


def _keyring_value(name: str) -> list[str]:
    service, _, user = name.rpartition("/")
    try:
        import keyring  # noqa: PLC0415

        value = keyring.get_password(service, user)
    except Exception:  # noqa: BLE001 - no keyring, no backend, locked: nothing to redact by value
        return []
    return [value] if value else []


def _secret_options(options: Any, key: str = "") -> list[str]:
    if isinstance(options, dict):
        return [v for k, item in options.items() for v in _secret_options(item, str(k))]
    if isinstance(options, list):
        return [v for item in options for v in _secret_options(item, key)]
    if isinstance(options, str) and key and _SECRET_KEY.search(key) and not _is_reference(options):
        return [options]
    return []


def inventory_document(inventory: Any, counts: dict[str, int] | None = None) -> dict[str, Any]:
    """The inventory as roce-wizard resolved it, host ranges expanded, credentials as references only.
    `counts` learns how many values were redacted (the manifest reports them like any other file's)."""
    from roce_wizard.model import SecretSource  # noqa: PLC0415

    counts = {} if counts is None else counts

    def password(ref: Any) -> Any:
        if ref is None:
            return None
        if ref.source is SecretSource.PLAINTEXT:
            counts["inventory secret"] = counts.get("inventory secret", 0) + 1
            return REDACTED
        if ref.source is SecretSource.PROMPT:
            return "prompt"
        return {ref.source.value: ref.name}

    def options(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: options(v, str(k)) for k, v in value.items()}
        if isinstance(value, list):
            return [options(v, key) for v in value]
        if key and _SECRET_KEY.search(key) and value not in (None, True, False):
            counts["secret field"] = counts.get("secret field", 0) + 1
            return REDACTED
        return value

    targets: dict[str, list[dict[str, Any]]] = {}
    for t in inventory.targets:
        entry: dict[str, Any] = {"name": t.name, "address": t.address}
        if t.port is not None:
            entry["port"] = t.port
        entry["username"] = t.credentials.username
        if t.credentials.password is not None:
            entry["password"] = password(t.credentials.password)
        if t.credentials.key_file:
            entry["key_file"] = t.credentials.key_file  # a path: the key itself never goes in
        for name in ("host", "vm", "device_type"):
            if getattr(t, name):
                entry[name] = getattr(t, name)
        roce = {k: (list(v) if isinstance(v, tuple) else v) for k, v in t.roce.__dict__.items() if v not in (None, ())}
        if roce:
            entry["roce"] = roce
        if t.options:
            entry["options"] = options(dict(t.options))
        targets.setdefault(t.kind.value, []).append(entry)
    return {"policy": inventory.policy.to_dict(), "targets": targets}
