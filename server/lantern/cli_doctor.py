"""`lantern doctor`: resolved settings (key masked), endpoint reachable?, ripgrep found?"""

from __future__ import annotations

import json
import subprocess
import urllib.error

from lantern.agent.endpoint import list_models, ollama_base_url
from lantern.approvals import grants_path
from lantern.audit import audit_path
from lantern.config import Settings, config_path
from lantern.tools.ripgrep import rg_binary
from lantern.workspace.errors import ToolError

EXIT_OK, EXIT_ENDPOINT = 0, 3


def run_doctor(settings: Settings) -> int:
    ok = True
    print("Settings (config.toml < environment < flags):")
    print("  " + json.dumps(settings.public_dict(), indent=2).replace("\n", "\n  "))
    print(f"Config file:  {config_path()}{'' if config_path().exists() else ' (not present)'}")
    print(f"Audit log:    {audit_path()}")
    print(f"Approvals:    {grants_path()}")
    try:
        rg = rg_binary()
        version = subprocess.run(
            [rg, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout.splitlines()[0]
        print(f"ripgrep:      {version} ({rg})")
    except (ToolError, OSError, IndexError, subprocess.SubprocessError):
        print("ripgrep:      NOT FOUND — reinstall lantern (the ripgrep wheel ships rg)")
        ok = False
    base_url = settings.base_url or (
        "https://api.openai.com/v1" if settings.api_key else ollama_base_url({})
    )
    try:
        models = list_models(base_url, settings.api_key)
        shown = ", ".join(models[:10]) + (" …" if len(models) > 10 else "")
        print(f"Endpoint:     {base_url} reachable; models: {shown or '(none listed)'}")
        if settings.model and models and settings.model not in models:
            print(f"  warning: model {settings.model!r} is not in the endpoint's list")
    except (OSError, ValueError, urllib.error.URLError) as exc:
        print(f"Endpoint:     {base_url} NOT reachable ({exc})")
        ok = False
    if not settings.model:
        print("Model:        not set (lantern ask will try Ollama, then explain how to set one)")
    return EXIT_OK if ok else EXIT_ENDPOINT
