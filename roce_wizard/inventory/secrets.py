"""Credentials held by reference: ``{env: NAME}``, ``{keyring: "service/user"}``, ``prompt``.

A plaintext password is accepted with a warning that never repeats it; a reference is resolved only
when a transport needs it, and an error names the reference, never the value.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from yaml.nodes import MappingNode, ScalarNode

from roce_wizard.inventory.fields import InventoryError, _check_env, _check_keyring, _Field, _is_null
from roce_wizard.model import Credentials, SecretRef, SecretSource


class SecretError(InventoryError):
    """A referenced secret could not be resolved (env var unset, keyring empty, no prompt)."""


def _passwords(ctx, f: _Field | None, names, usernames, spread) -> list[SecretRef | None]:
    count = len(names)
    if f is None or _is_null(f.node):
        return [None] * count
    expected = "{env: NAME}, {keyring: 'service/user'}, prompt, or a plaintext string"
    node = f.node
    if isinstance(node, MappingNode):
        items = ctx.mapping(node, f.path, expected)
        ctx.known(items, ("env", "keyring"), f.path, "password source")
        if len(items) != 1:
            raise ctx.expect(node, f.path, "exactly one of env or keyring", f"{len(items)} keys")
        (source, (_, value_node)), = items.items()
        check = _check_env if source == "env" else _check_keyring
        what = "an environment variable name" if source == "env" else "a keyring reference 'service/user'"
        sub = _Field(value_node, f"{f.path}.{source}")
        values = spread(sub, ctx.text(value_node, sub.path, what), check)
        return [SecretRef(SecretSource(source), name=v) for v in values]
    if isinstance(node, ScalarNode):
        # never echo the value: this may be the password itself
        if not node.value:
            raise ctx.expect(node, f.path, expected, "an empty string")
        if node.value == "prompt":
            return [
                SecretRef(SecretSource.PROMPT, name=f"{usernames[i] or Credentials.username} on {n}")
                for i, n in enumerate(names)
            ]
        target = names[0] if count == 1 else f"{names[0]}…{names[-1]}"
        ctx.warn(
            node,
            f"plaintext password for target {target}; use {{env: …}}, {{keyring: …}} or prompt",
        )
        return [SecretRef(SecretSource.PLAINTEXT, value=node.value) for _ in names]
    raise ctx.expect(node, f.path, expected, "a list")


def resolve_secret(ref: SecretRef, prompt: Callable[[str], str] | None = None) -> str:
    """The secret a reference points at. Raises :class:`SecretError` naming the reference, never the value."""
    if ref.source is SecretSource.PLAINTEXT:
        if ref.value is None:
            raise SecretError("plaintext password reference holds no value", field="password")
        return ref.value
    if ref.source is SecretSource.ENV:
        value = os.environ.get(ref.name)
        if value is None:
            raise SecretError(
                f"environment variable {ref.name} is not set",
                field="password",
                expected=f"{ref.name} set in the environment",
            )
        return value
    if ref.source is SecretSource.KEYRING:
        service, _, user = ref.name.rpartition("/")
        try:
            import keyring
            import keyring.errors

            value = keyring.get_password(service, user)
        except ImportError:
            raise SecretError(
                f"keyring {ref.name}: the keyring package is not installed", field="password"
            ) from None
        except Exception as exc:  # keyring backends raise their own types (NoKeyringError, dbus…)
            raise SecretError(
                f"keyring {ref.name}: {type(exc).__name__}: {exc}",
                field="password",
                expected=f"a password stored for service {service!r} user {user!r}",
            ) from None
        if value is None:
            raise SecretError(
                f"keyring has no password for service {service!r} user {user!r}",
                field="password",
                expected=f"`keyring set {service} {user}`",
            )
        return value
    if ref.source is SecretSource.PROMPT:
        label = ref.name or "target"
        if prompt is None:
            raise SecretError(
                f"password for {label} must be typed in, but this run cannot prompt (non-interactive)",
                field="password",
                expected="an interactive run, or {env: …} / {keyring: …}",
            )
        try:
            value = prompt(f"Password for {label}: ")
        except (EOFError, KeyboardInterrupt):
            raise SecretError(f"no password entered for {label}", field="password") from None
        if value is None:
            raise SecretError(f"no password entered for {label}", field="password")
        return value
    raise SecretError(f"unknown secret source {ref.source!r}", field="password")
