#!/usr/bin/env python3
"""Black-box SDK-compatibility check for prime-mock (stdlib only).

This script talks to a running prime-mock exactly the way the Python SDK
``prime-sandboxes`` 0.2.39 does (same paths, query strings, JSON bodies,
headers and call order) and validates every answer the way the SDK's
pydantic v2 models would, so that a mock answer which would make the real SDK
raise is caught here. The real SDK cannot be installed in this environment
(no PyPI; Debian ships pydantic v1), hence this independent re-implementation.

Sources the rules come from (PrimeIntellect-ai/prime, packages/prime-sandboxes):

* ``sandbox.py`` at commit 19b06986 (0.2.39 era: egress policy, status:batchGet,
  idempotent auth POST): ``create``, ``list``, ``get``, ``get_sandbox_statuses``,
  ``delete``, ``get_network``, ``set_network``/``_network_update_payload``,
  ``bulk_delete``, ``get_logs``, ``SandboxAuthCache``, ``_execute_command_connect_rpc``,
  ``upload_bytes``, ``read_file``, ``start_background_job``, ``get_background_job(s)``.
* ``core/client.py`` at commit 0c6028a8: headers, URL building, status mapping,
  "API response was not a dictionary".
* ``models.py`` at commit 050c9d14 (a later 0.3.x file; the 0.2.39 file is not
  in the index) for the response models, with the 0.2.39 differences applied:
  ``Sandbox.start_command`` is ``StartCommand | str`` (PR #809) and the create
  request has ``vm``, ``guaranteed``, ``registry_credentials_id`` and the
  ``"tail -f /dev/null"`` default (PRs #809/#820/#834).

The platform the SDK talks to is today's (late-2026) one: since 2026-09-18
every sandbox is a VM. What a 0.2.39 user still sends is checked against it:

* ``create(vm=False)`` (a container) is answered HTTP 410 with the detail
  "Container sandboxes were retired on 2026-09-18: every sandbox is a VM. Omit
  vm (or send true).", which the SDK raises as ``APIError('HTTP 410: ...')``,
  and nothing is created.
* The SDK's default create (``vm`` unset, the ``"tail -f /dev/null"`` string
  start command on the wire, ``cpu_cores`` as the float 1.0) is a VM; it is the
  run's second sandbox ("vm2"), which takes over what the container used to
  cover: status waits, list/get, logs, auth, Connect reachability, files,
  background jobs, delete. Bulk delete creates VMs (vm unset, vm=True).
* Creates the 0.2.39 SDK lets through but the platform now refuses: a
  fractional ``cpu_cores`` (whole vCPUs; 1.0 and 2.0 pass), ``timeout_minutes``
  0, ``idle_timeout_minutes`` over 1,440; each is a 422 ``APIError`` and
  creates nothing. ``arch`` (not a 0.2.39 field) is checked as contract:
  amd64/arm64 accepted, anything else 422.

Dropped with the containers, because the platform no longer has them: REST
exec (``POST {gateway}/{user_ns}/{job_id}/exec``, the container transport and
reachability probe; the route is checked to be gone), the read-file window
(``offset``/``length`` with ``total_size``/``offset``/``truncated``; every
sandbox now ignores the window), container background jobs and the batch's
``NOT_VM`` answer, and the egress-policy refusal for a container.

Every check prints one line. The first mismatch prints a precise message
(endpoint, key, expected-per-SDK, actual) and the script exits 1; with
``--keep-going`` it continues with the next step and exits 1 at the end.
Exit status 2 means the mock could not be reached or a usage error.

Usage: python3 sdk_blackbox.py --base-url http://127.0.0.1:PORT [--keep-going]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import mimetypes
import os
import random
import re
import shlex
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Callable, Dict, List, Optional, Tuple

SDK_VERSION = "0.2.39"
PY_VERSION = f"{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}"
# core/client.py _default_user_agent()
USER_AGENT = f"prime-sandboxes/{SDK_VERSION} python/{PY_VERSION}"

# Source pointers used in mismatch messages.
SRC_MODELS = "prime-sandboxes models.py"
SRC_SANDBOX = "prime-sandboxes sandbox.py@19b06986"
SRC_CLIENT = "prime-sandboxes core/client.py@0c6028a8"

STATUS_ENUM = ("PENDING", "PROVISIONING", "RUNNING", "PAUSED", "ERROR", "TERMINATED", "TIMEOUT")
TERMINAL = ("ERROR", "TERMINATED", "TIMEOUT")
BATCH_ERROR_CODES = ("NOT_FOUND", "FORBIDDEN", "MANAGED")
DEFAULT_SHELL_COMMAND = "tail -f /dev/null"
# The argv start command of the run's vm=True sandbox.
VM_START_COMMAND = {"executable": "/bin/sh", "args": ["-c", "sleep infinity"]}
# The 410's detail for a create with vm false (containers retired 2026-09-18).
CONTAINERS_RETIRED_DETAIL = ("Container sandboxes were retired on 2026-09-18: every sandbox is a VM. "
                             "Omit vm (or send true).")


# ---------------------------------------------------------------------------
# Failures


class Mismatch(Exception):
    """The mock answered something the SDK would reject, or broke the contract."""

    def __init__(self, check: str, message: str) -> None:
        super().__init__(f"{check}: {message}")
        self.check = check
        self.message = message


class Unreachable(Exception):
    """The mock could not be reached at all."""


class ModelError(Exception):
    """A pydantic-style validation error: a location and a message."""

    def __init__(self, loc: str, msg: str) -> None:
        super().__init__(f"{loc}: {msg}")
        self.loc = loc
        self.msg = msg


# ---------------------------------------------------------------------------
# A small re-implementation of the pydantic v2 rules the SDK models rely on.
# It is at least as strict as pydantic's lax mode: where pydantic would coerce
# (e.g. "1" -> int, true -> 1, unix numbers -> datetime) this rejects, because
# a faithful mock must send the natural JSON type.

MISSING = object()

Validator = Callable[[Any, str], Any]


def _tname(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def _short(v: Any, limit: int = 160) -> str:
    s = json.dumps(v, ensure_ascii=False, default=str)
    return s if len(s) <= limit else s[: limit - 3] + "..."


def t_str(v: Any, loc: str) -> str:
    if not isinstance(v, str):
        raise ModelError(loc, f"Input should be a valid string (got {_tname(v)} {_short(v)})")
    return v


def t_int(v: Any, loc: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ModelError(loc, f"Input should be a valid integer (got {_tname(v)} {_short(v)})")
    return v


def t_float(v: Any, loc: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ModelError(loc, f"Input should be a valid number (got {_tname(v)} {_short(v)})")
    return float(v)


def t_bool(v: Any, loc: str) -> bool:
    if not isinstance(v, bool):
        raise ModelError(loc, f"Input should be a valid boolean (got {_tname(v)} {_short(v)})")
    return v


def t_any(v: Any, loc: str) -> Any:
    return v


# pydantic v2 (speedate) datetime strings: YYYY-MM-DD[T ]HH:MM[:SS[.f{1,6}]][Z|+HH[:]MM].
# speedate rejects more than 6 fractional digits ("second fraction value is
# more than 6 digits long", pydantic#6512), which is what Go's RFC3339Nano
# would produce for an untruncated time.Time.
_PYDANTIC_DT = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?"
    r"(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$"
)


def parse_pydantic_datetime(v: Any, loc: str) -> dt.datetime:
    if not isinstance(v, str):
        raise ModelError(loc, f"Input should be an ISO-8601 datetime string (got {_tname(v)} {_short(v)})")
    m = _PYDANTIC_DT.match(v)
    if not m:
        hint = ""
        frac = re.search(r"\.(\d+)", v)
        if frac and len(frac.group(1)) > 6:
            hint = " (second fraction value is more than 6 digits long)"
        raise ModelError(loc, f"Input should be a valid datetime{hint}: {v!r}")
    y, mo, d, hh, mi, ss, frac, z, sign, tzh, tzm = m.groups()
    try:
        tz = None
        if z:
            tz = dt.timezone.utc
        elif sign:
            off = dt.timedelta(hours=int(tzh), minutes=int(tzm))
            tz = dt.timezone(off if sign == "+" else -off)
        return dt.datetime(
            int(y), int(mo), int(d), int(hh), int(mi), int(ss or 0),
            int((frac or "0").ljust(6, "0")), tzinfo=tz,
        )
    except ValueError as exc:
        raise ModelError(loc, f"Input should be a valid datetime ({exc}): {v!r}") from None


def t_datetime(v: Any, loc: str) -> dt.datetime:
    return parse_pydantic_datetime(v, loc)


# Python 3.10's datetime.fromisoformat (the SDK supports >=3.10) only reads
# what isoformat() writes: YYYY-MM-DD[*HH[:MM[:SS[.fff[fff]]]][+HH:MM[:SS[.ffffff]]]].
# The SDK feeds it auth["expires_at"].replace("Z", "+00:00") (sandbox.py
# _auth_refresh_cutoff); Python 3.11+ would accept more.
_PY310_ISO = re.compile(
    r"^\d{4}-\d{2}-\d{2}"
    r"(?:.\d{2}(?::\d{2}(?::\d{2}(?:\.(?:\d{3}|\d{6}))?)?)?"
    r"(?:[+-]\d{2}:\d{2}(?::\d{2}(?:\.\d{6})?)?)?)?$"
)


def parse_py310_fromisoformat(s: str) -> dt.datetime:
    if not _PY310_ISO.match(s):
        raise ValueError(f"Invalid isoformat string for Python 3.10: {s!r}")
    return dt.datetime.fromisoformat(s)


def t_optional(inner: Validator) -> Validator:
    def v_(v: Any, loc: str) -> Any:
        return None if v is None else inner(v, loc)

    return v_


def t_list(inner: Validator) -> Validator:
    def v_(v: Any, loc: str) -> List[Any]:
        if not isinstance(v, list):
            raise ModelError(loc, f"Input should be a valid list (got {_tname(v)} {_short(v)})")
        return [inner(item, f"{loc}.{i}") for i, item in enumerate(v)]

    return v_


def t_dict(inner: Validator) -> Validator:
    def v_(v: Any, loc: str) -> Dict[str, Any]:
        if not isinstance(v, dict):
            raise ModelError(loc, f"Input should be a valid dictionary (got {_tname(v)} {_short(v)})")
        return {k: inner(item, f"{loc}.{k}") for k, item in v.items()}

    return v_


def t_choice(values: Tuple[str, ...], what: str) -> Validator:
    def v_(v: Any, loc: str) -> str:
        if not isinstance(v, str) or v not in values:
            raise ModelError(loc, f"Input should be {what}: one of {', '.join(values)} (got {_short(v)})")
        return v

    return v_


class Field:
    def __init__(self, name: str, validator: Validator, alias: Optional[str] = None,
                 default: Any = MISSING) -> None:
        self.name = name
        self.alias = alias or name
        self.validator = validator
        self.default = default


class Model:
    """A pydantic BaseModel description: fields, aliases, extra handling."""

    def __init__(self, name: str, fields: List[Field], populate_by_name: bool = False,
                 extra: str = "ignore", after: Optional[Callable[[Dict[str, Any], str], None]] = None):
        self.name = name
        self.fields = fields
        self.populate_by_name = populate_by_name
        self.extra = extra
        self.after = after

    def __call__(self, v: Any, loc: str = "") -> Dict[str, Any]:
        return self.validate(v, loc)

    def validate(self, data: Any, loc: str = "") -> Dict[str, Any]:
        where = loc or self.name
        if not isinstance(data, dict):
            raise ModelError(where, f"Input should be a valid dictionary or instance of {self.name} "
                                    f"(got {_tname(data)} {_short(data)})")
        out: Dict[str, Any] = {}
        used = set()
        for f in self.fields:
            # pydantic v2: the alias is looked up first; the field name only
            # with populate_by_name (and only when the alias is absent).
            if f.alias in data:
                key, raw = f.alias, data[f.alias]
            elif self.populate_by_name and f.name in data:
                key, raw = f.name, data[f.name]
            else:
                key, raw = None, MISSING
            sub = f"{where}.{key or f.alias}"
            if raw is MISSING:
                if f.default is MISSING:
                    names = f"'{f.alias}'" + (f" (or '{f.name}')" if self.populate_by_name and f.name != f.alias else "")
                    raise ModelError(sub, f"Field required: key {names} is missing")
                out[f.name] = f.default() if callable(f.default) else f.default
                continue
            used.add(key)
            out[f.name] = f.validator(raw, sub)
        if self.extra == "forbid":
            known = {f.alias for f in self.fields} | {f.name for f in self.fields}
            for k in data:
                if k not in known:
                    raise ModelError(f"{where}.{k}", "Extra inputs are not permitted")
        if self.after:
            self.after(out, where)
        return out


# --- SDK models -------------------------------------------------------------


def _start_command_after(out: Dict[str, Any], loc: str) -> None:
    if "\x00" in out["executable"]:
        raise ModelError(loc, "Value error, executable must not contain NUL bytes")
    if any("\x00" in a for a in out["args"]):
        raise ModelError(loc, "Value error, args must not contain NUL bytes")


def _min_len_1(v: Any, loc: str) -> str:
    s = t_str(v, loc)
    if len(s) < 1:
        raise ModelError(loc, "String should have at least 1 character")
    return s


# models.py StartCommand: executable (min_length=1), args (default []), extra="forbid", no NULs.
StartCommandModel = Model("StartCommand", [
    Field("executable", _min_len_1),
    Field("args", t_list(t_str), default=list),
], extra="forbid", after=_start_command_after)


def t_start_command(v: Any, loc: str) -> Any:
    """Sandbox.start_command: Optional[StartCommand | str] (0.2.39, PR #809)."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, dict):
        return StartCommandModel.validate(v, loc)
    raise ModelError(loc, f"Input should be a string or a StartCommand object "
                          f"{{executable, args}} (got {_tname(v)} {_short(v)})")


# models.py AdvancedConfigs: extra="allow" (any object).
AdvancedConfigsModel = t_dict(t_any)

# models.py Sandbox (populate_by_name=True; unknown keys ignored).
SandboxModel = Model("Sandbox", [
    Field("id", t_str),
    Field("name", t_str),
    Field("docker_image", t_str, "dockerImage"),
    Field("start_command", t_start_command, "startCommand", None),
    Field("cpu_cores", t_float, "cpuCores"),
    Field("memory_gb", t_float, "memoryGB"),
    Field("disk_size_gb", t_float, "diskSizeGB"),
    Field("disk_mount_path", t_str, "diskMountPath"),
    Field("gpu_count", t_int, "gpuCount"),
    Field("gpu_type", t_optional(t_str), "gpuType", None),
    Field("vm", t_bool, default=False),  # bool = False: null is rejected
    Field("network_allowlist", t_optional(t_list(t_str)), "networkAllowlist", None),
    Field("network_denylist", t_optional(t_list(t_str)), "networkDenylist", None),
    Field("status", t_str),  # plain str on Sandbox (not the enum)
    Field("timeout_minutes", t_int, "timeoutMinutes"),
    Field("idle_timeout_minutes", t_optional(t_int), "idleTimeoutMinutes", None),
    Field("termination_reason", t_optional(t_str), "terminationReason", None),
    Field("environment_vars", t_optional(t_dict(t_any)), "environmentVars", None),
    Field("secrets", t_optional(t_dict(t_any)), default=None),
    Field("advanced_configs", t_optional(AdvancedConfigsModel), "advancedConfigs", None),
    Field("labels", t_list(t_str), default=list),  # List[str]: null is rejected
    Field("created_at", t_datetime, "createdAt"),
    Field("updated_at", t_datetime, "updatedAt"),
    Field("started_at", t_optional(t_datetime), "startedAt", None),
    Field("terminated_at", t_optional(t_datetime), "terminatedAt", None),
    Field("exit_code", t_optional(t_int), "exitCode", None),
    Field("error_type", t_optional(t_str), "errorType", None),
    Field("error_message", t_optional(t_str), "errorMessage", None),
    Field("user_id", t_optional(t_str), "userId", None),
    Field("team_id", t_optional(t_str), "teamId", None),
    Field("kubernetes_job_id", t_optional(t_str), "kubernetesJobId", None),
    Field("region", t_optional(t_str), default=None),
    Field("registry_credentials_id", t_optional(t_str), "registryCredentialsId", None),
    Field("pending_image_build_id", t_optional(t_str), "pendingImageBuildId", None),
], populate_by_name=True)

# models.py SandboxListResponse (populate_by_name=True).
SandboxListResponseModel = Model("SandboxListResponse", [
    Field("sandboxes", t_list(SandboxModel)),
    Field("total", t_int),
    Field("page", t_int),
    Field("per_page", t_int, "perPage"),
    Field("has_next", t_bool, "hasNext"),
], populate_by_name=True)

# models.py SandboxStatusSnapshot / SandboxStatusLookupError / BatchSandboxStatusResponse
# (no aliases: snake_case only).
SandboxStatusSnapshotModel = Model("SandboxStatusSnapshot", [
    Field("sandbox_id", t_str),
    Field("status", t_choice(STATUS_ENUM, "a SandboxStatus")),
    Field("error_type", t_optional(t_str), default=None),
    Field("error_message", t_optional(t_str), default=None),
    Field("pending_image_build_id", t_optional(t_str), default=None),
])
SandboxStatusLookupErrorModel = Model("SandboxStatusLookupError", [
    Field("sandbox_id", t_str),
    Field("code", t_choice(BATCH_ERROR_CODES, "a Literal code")),
    Field("message", t_str),
])
BatchSandboxStatusResponseModel = Model("BatchSandboxStatusResponse", [
    Field("statuses", t_list(SandboxStatusSnapshotModel)),
    Field("errors", t_list(SandboxStatusLookupErrorModel)),
])

# models.py SandboxEgressPolicy / EgressPolicyStatus (populate_by_name but no
# aliases: snake_case only; policy, generation, applied_generation, applied required).
SandboxEgressPolicyModel = Model("SandboxEgressPolicy", [
    Field("allowlist", t_optional(t_list(t_str)), default=None),
    Field("denylist", t_optional(t_list(t_str)), default=None),
])
EgressPolicyStatusModel = Model("EgressPolicyStatus", [
    Field("policy", SandboxEgressPolicyModel),
    Field("generation", t_int),
    Field("applied_generation", t_int),
    Field("applied", t_bool),
], populate_by_name=True)

# models.py SandboxLogsResponse.
SandboxLogsResponseModel = Model("SandboxLogsResponse", [Field("logs", t_str)])

# models.py BulkDeleteSandboxResponse: failed is List[Dict[str, str]].
BulkDeleteSandboxResponseModel = Model("BulkDeleteSandboxResponse", [
    Field("succeeded", t_list(t_str)),
    Field("failed", t_list(t_dict(t_str))),
    Field("message", t_str),
])

# models.py FileUploadResponse (upload_file / upload_bytes).
FileUploadResponseModel = Model("FileUploadResponse", [
    Field("success", t_bool),
    Field("path", t_str),
    Field("size", t_int),
    Field("timestamp", t_datetime),
])

# models.py ReadFileResponse: VMs omit the window keys (they default to None).
ReadFileResponseModel = Model("ReadFileResponse", [
    Field("content", t_str),
    Field("size", t_int),
    Field("total_size", t_optional(t_int), default=None),
    Field("offset", t_optional(t_int), default=None),
    Field("truncated", t_optional(t_bool), default=None),
])

# models.py BackgroundJobStatusSnapshot / BackgroundJobStatusLookupError /
# BatchBackgroundJobStatusResponse (POST /sandbox/background-jobs/status:batchGet).
JOB_ERROR_CODES = ("NOT_FOUND", "FORBIDDEN", "MANAGED", "NOT_VM", "NOT_RUNNING", "RUNTIME_ERROR")
BackgroundJobStatusSnapshotModel = Model("BackgroundJobStatusSnapshot", [
    Field("sandbox_id", t_str),
    Field("job_id", t_str),
    Field("completed", t_bool),
    Field("exit_code", t_optional(t_int), default=None),
])
BackgroundJobStatusLookupErrorModel = Model("BackgroundJobStatusLookupError", [
    Field("sandbox_id", t_str),
    Field("job_id", t_str),
    Field("code", t_choice(JOB_ERROR_CODES, "a Literal code")),
    Field("message", t_str),
])
BatchBackgroundJobStatusResponseModel = Model("BatchBackgroundJobStatusResponse", [
    Field("statuses", t_list(BackgroundJobStatusSnapshotModel)),
    Field("errors", t_list(BackgroundJobStatusLookupErrorModel)),
])

# sandbox.py JOB_OUTPUT_TAIL_BYTES: the tail get_background_job reads of each log.
JOB_OUTPUT_TAIL_BYTES = 10 * 1024 * 1024


def validate_auth(data: Any, loc: str = "auth") -> Dict[str, Any]:
    """The auth answer is a raw dict in the SDK (no model); what it touches:

    sandbox.py: auth["gateway_url"].rstrip("/"), auth["user_ns"], auth["job_id"],
    auth["token"] (Bearer header), and _auth_refresh_cutoff():
    datetime.fromisoformat(auth["expires_at"].replace("Z", "+00:00")), naive = UTC.
    """
    if not isinstance(data, dict):
        raise ModelError(loc, f"auth answer must be an object (got {_tname(data)})")
    for key in ("gateway_url", "token", "user_ns", "job_id", "expires_at"):
        if key not in data:
            raise ModelError(f"{loc}.{key}", "KeyError: the SDK indexes this key directly")
        if not isinstance(data[key], str):
            raise ModelError(f"{loc}.{key}", f"must be a string (got {_tname(data[key])} {_short(data[key])})")
    if not data["token"]:
        raise ModelError(f"{loc}.token", "must not be empty (sent as 'Authorization: Bearer <token>')")
    raw = data["expires_at"].replace("Z", "+00:00")
    try:
        exp = parse_py310_fromisoformat(raw)
    except ValueError as exc:
        raise ModelError(f"{loc}.expires_at", f"datetime.fromisoformat on Python 3.10 fails: {exc}") from None
    if exp.tzinfo is None:
        exp = exp.replace(tzinfo=dt.timezone.utc)
    return {**data, "_expires": exp}


def sdk_parse(model: Any, data: Any, check: str, endpoint: str, source: str) -> Dict[str, Any]:
    try:
        return model(data) if not isinstance(model, Model) else model.validate(data)
    except ModelError as exc:
        raise Mismatch(check, f"[sdk-parse] {endpoint}: key {exc.loc}: {exc.msg}. "
                              f"Expected per {source}; the real SDK would raise a "
                              f"pydantic ValidationError here. Body: {_short(data, 600)}") from None


# ---------------------------------------------------------------------------
# HTTP, mirroring core/client.py APIClient.request


class Response:
    def __init__(self, method: str, url: str, status: int, headers: Dict[str, str], body: bytes,
                 request_body: Optional[bytes]):
        self.method = method
        self.url = url
        self.status = status
        self.headers = headers
        self.body = body
        self.request_body = request_body

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def describe(self) -> str:
        req = f" request body {self.request_body.decode('utf-8', 'replace')[:300]}" if self.request_body else ""
        return f"{self.method} {self.url} ->{req} HTTP {self.status} {self.text[:400]!r}"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D401
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def encode_params(params: Optional[Dict[str, Any]]) -> str:
    """httpx QueryParams: lists repeat the key, bools are true/false, None is ''."""
    if not params:
        return ""
    pairs: List[Tuple[str, str]] = []

    def prim(v: Any) -> str:
        if v is True:
            return "true"
        if v is False:
            return "false"
        if v is None:
            return ""
        return str(v)

    for k, v in params.items():
        if isinstance(v, (list, tuple)):
            pairs.extend((k, prim(item)) for item in v)
        else:
            pairs.append((k, prim(v)))
    return urllib.parse.urlencode(pairs)


class SDKError(Exception):
    """What the SDK raises for an error status (core/client.py request())."""

    def __init__(self, kind: str, message: str, response: Response):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.response = response


class Client:
    """APIClient + SandboxClient request shapes of prime-sandboxes 0.2.39."""

    def __init__(self, base_url: str, api_key: Optional[str], timeout: float = 30.0):
        # core/config.py _strip_api_v1: rstrip('/') then remove a trailing /api/v1.
        base = base_url.rstrip("/")
        if base.endswith("/api/v1"):
            base = base[: -len("/api/v1")]
        self.base_url = base
        self.api_key = api_key
        self.timeout = timeout
        self.requests = 0

    def headers(self) -> Dict[str, str]:
        h = {"Content-Type": "application/json"}
        if self.api_key:
            h["Authorization"] = f"Bearer {self.api_key}"
        h["User-Agent"] = USER_AGENT
        return h

    def url(self, endpoint: str) -> str:
        endpoint = f"/api/v1/{endpoint}" if not endpoint.startswith("/") else f"/api/v1{endpoint}"
        return f"{self.base_url}{endpoint}"

    def raw(self, method: str, url: str, params: Optional[Dict[str, Any]] = None,
            json_body: Any = None, headers: Optional[Dict[str, str]] = None,
            timeout: Optional[float] = None) -> Response:
        q = encode_params(params)
        full = f"{url}?{q}" if q else url
        data = None
        if json_body is not None:
            # httpx >= 0.28 serialises json= compactly, UTF-8, no NaN.
            data = json.dumps(json_body, ensure_ascii=False, separators=(",", ":"),
                              allow_nan=False).encode("utf-8")
        req = urllib.request.Request(full, data=data, method=method,
                                     headers=dict(self.headers() if headers is None else headers))
        self.requests += 1
        try:
            with _OPENER.open(req, timeout=timeout or self.timeout) as resp:
                return Response(method, full, resp.status, dict(resp.headers), resp.read(), data)
        except urllib.error.HTTPError as exc:
            body = exc.read() if exc.fp is not None else b""
            return Response(method, full, exc.code, dict(exc.headers or {}), body, data)
        except (urllib.error.URLError, ConnectionError, socket.timeout, TimeoutError) as exc:
            raise Unreachable(f"{method} {full}: {exc}") from None

    def request(self, method: str, endpoint: str, params: Optional[Dict[str, Any]] = None,
                json_body: Any = None, idempotent_post: bool = False,
                check: str = "?") -> Tuple[Dict[str, Any], Response]:
        """core/client.py APIClient.request: returns the JSON object or raises SDKError.

        Idempotent POSTs (create, status:batchGet, auth) are retried on
        502/503/504, 3 attempts in total; other requests are not retried on a
        status (transport errors aside).
        """
        url = self.url(endpoint)
        attempts = 3 if (method == "POST" and idempotent_post) else 1
        resp: Optional[Response] = None
        for attempt in range(attempts):
            resp = self.raw(method, url, params=params, json_body=json_body)
            if resp.status in (502, 503, 504) and attempt < attempts - 1:
                time.sleep(random.uniform(0, min(2.0, 0.1 * 2 ** attempt)))
                continue
            break
        assert resp is not None
        if 300 <= resp.status < 400:
            raise Mismatch(check, f"[transport] {resp.describe()}: a redirect; the SDK follows it "
                                  f"but the mock should answer directly")
        if resp.status >= 400:
            if resp.status == 401:
                raise SDKError("UnauthorizedError", "API key unauthorized. Check PRIME_API_KEY.", resp)
            if resp.status == 402:
                raise SDKError("PaymentRequiredError", "Payment required. Check billing status.", resp)
            try:
                err = json.loads(resp.body)
            except ValueError:
                err = None
            if isinstance(err, dict) and "detail" in err:
                raise SDKError("APIError", f"HTTP {resp.status}: {err['detail']}", resp)
            raise SDKError("APIError", f"HTTP {resp.status}: {resp.text}", resp)
        # 2xx (and 1xx never reach here): response.json() then the dict check.
        try:
            result = json.loads(resp.body)
        except ValueError as exc:
            raise Mismatch(check, f"[sdk-parse] {resp.describe()}: the body is not JSON ({exc}); "
                                  f"response.json() raises JSONDecodeError, which escapes the SDK "
                                  f"unwrapped ({SRC_CLIENT} request())") from None
        if not isinstance(result, dict):
            raise Mismatch(check, f"[sdk-parse] {resp.describe()}: the body is a JSON {_tname(result)}, "
                                  f"not an object; the SDK raises APIError('API response was not a "
                                  f"dictionary') ({SRC_CLIENT} request())")
        return result, resp


# ---------------------------------------------------------------------------
# SDK-shaped operations (sandbox.py SandboxClient)


def create_payload(name: str, docker_image: str, *, vm: Optional[bool] = None,
                   start_command: Any = MISSING, cpu_cores: float = 1.0, memory_gb: float = 1.0,
                   disk_size_gb: float = 5.0, gpu_count: int = 0, timeout_minutes: int = 60,
                   idle_timeout_minutes: Optional[int] = None,
                   environment_vars: Optional[Dict[str, str]] = None,
                   secrets: Optional[Dict[str, str]] = None, labels: Optional[List[str]] = None,
                   network_allowlist: Optional[List[str]] = None,
                   network_denylist: Optional[List[str]] = None,
                   idempotency_key: Optional[str] = None) -> Dict[str, Any]:
    """CreateSandboxRequest(...).model_dump(by_alias=False, exclude_none=True) of 0.2.39,
    then sandbox.py create(): idempotency_key always set (uuid4().hex).

    start_command defaults to "tail -f /dev/null" and is cleared only when vm is
    True and no command was given; vm is omitted when unset; labels, guaranteed,
    cpu/memory/disk, gpu_count and timeout_minutes are always present.
    """
    if start_command is MISSING:
        start_command = None if vm is True else DEFAULT_SHELL_COMMAND
    if isinstance(start_command, str) and vm is not False and start_command != DEFAULT_SHELL_COMMAND:
        raise ValueError("the SDK refuses explicit string start commands unless vm=False")
    if isinstance(start_command, dict):
        start_command = {"executable": start_command["executable"], "args": list(start_command.get("args", []))}
    body: Dict[str, Any] = {"name": name, "docker_image": docker_image}
    if start_command is not None:
        body["start_command"] = start_command
    body.update({"cpu_cores": float(cpu_cores), "memory_gb": float(memory_gb),
                 "disk_size_gb": float(disk_size_gb), "gpu_count": gpu_count})
    if vm is not None:
        body["vm"] = vm
    if network_allowlist is not None:
        body["network_allowlist"] = network_allowlist
    if network_denylist is not None:
        body["network_denylist"] = network_denylist
    body["timeout_minutes"] = timeout_minutes
    if idle_timeout_minutes is not None:
        body["idle_timeout_minutes"] = idle_timeout_minutes
    if environment_vars is not None:
        body["environment_vars"] = environment_vars
    if secrets is not None:
        body["secrets"] = secrets
    body["labels"] = list(labels or [])
    body["guaranteed"] = False
    body["idempotency_key"] = idempotency_key or uuid.uuid4().hex
    return body


def network_update_payload(allow: Optional[List[str]] = None,
                           deny: Optional[List[str]] = None) -> Dict[str, Any]:
    """sandbox.py _network_update_payload (client-side checks omitted: callers pass valid input)."""
    if (allow is None) == (deny is None):
        raise ValueError("exactly one of allow or deny must be provided")
    entries = list(allow if allow is not None else deny or [])
    if not entries:
        raise ValueError("allow or deny must contain at least one destination")
    if "*" in entries:
        if entries != ["*"]:
            raise ValueError("'*' must be the only destination")
        return {"allowlist": None, "denylist": []} if allow is not None else {"allowlist": [], "denylist": None}
    return {"allowlist": entries if allow is not None else None,
            "denylist": entries if deny is not None else None}


def httpx_multipart(field: str, filename: str, content: bytes) -> Tuple[bytes, str]:
    """The body and Content-Type httpx builds for files={field: (filename, content)}:
    a random 32-hex boundary, one part with Content-Disposition and the
    content type mimetypes guesses from the file name (application/octet-stream
    when it cannot)."""
    boundary = os.urandom(16).hex()
    ctype = mimetypes.guess_type(filename)[0] or "application/octet-stream"
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"{filename}\"\r\n"
            f"Content-Type: {ctype}\r\n\r\n").encode()
    body = head + content + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def background_job_command(job_id: str, command: str, working_dir: Optional[str] = None,
                           env: Optional[Dict[str, str]] = None) -> str:
    """sandbox.py start_background_job: the one command it sends (timeout 30)."""
    env_prefix = ""
    if env:
        exports = [f"export {k}={shlex.quote(v)}" for k, v in env.items()]
        env_prefix = "; ".join(exports)
        if env_prefix:
            env_prefix += "; "
    dir_prefix = f"cd {shlex.quote(working_dir)} && " if working_dir else ""
    command_body = f"{env_prefix}{dir_prefix}{command}"
    sh_command = (
        f"({command_body}) > {shlex.quote(f'/tmp/job_{job_id}.stdout.log')} "
        f"2> {shlex.quote(f'/tmp/job_{job_id}.stderr.log')}; "
        f"echo $? > {shlex.quote(f'/tmp/job_{job_id}.exit')}"
    )
    return f"nohup sh -c {shlex.quote(sh_command)} < /dev/null > /dev/null 2>&1 &"


# ---------------------------------------------------------------------------
# Connect RPC for VM commands, by hand (stdlib only, no protobuf package).
# The SDK (sandbox.py _execute_command_connect_rpc, rpc_command_session.py)
# sends StartRequest{command: CommandSpec{cmd: "/bin/bash", args: ["-c",
# command], envs, cwd only when a working dir is given}, stdin: false} with
# the Connect protocol, binary protobuf codec, no compression, and
# Connect-Timeout-Ms = the command timeout. Field numbers are those of the
# SDK's command_session.proto descriptor.


def _pb_varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _pb_bytes(field: int, data: bytes) -> bytes:
    return _pb_varint(field << 3 | 2) + _pb_varint(len(data)) + data


def encode_start_request(command: str, env: Optional[Dict[str, str]], working_dir: Optional[str],
                         stdin: bool = False) -> bytes:
    spec = _pb_bytes(1, b"/bin/bash") + _pb_bytes(2, b"-c") + _pb_bytes(2, command.encode())
    for k, v in (env or {}).items():
        spec += _pb_bytes(3, _pb_bytes(1, k.encode()) + _pb_bytes(2, v.encode()))
    if working_dir is not None:
        spec += _pb_bytes(4, working_dir.encode())
    # stdin is a proto3 optional: present even when false.
    return _pb_bytes(1, spec) + _pb_varint(4 << 3 | 0) + _pb_varint(1 if stdin else 0)


def _pb_fields(data: bytes) -> List[Tuple[int, Any]]:
    """Decode one message level: (field number, int or bytes) pairs."""
    out: List[Tuple[int, Any]] = []
    i = 0
    while i < len(data):
        key, i = _pb_read_varint(data, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _pb_read_varint(data, i)
            out.append((field, v))
        elif wire == 2:
            n, i = _pb_read_varint(data, i)
            out.append((field, data[i:i + n]))
            i += n
        else:
            raise ValueError(f"unexpected wire type {wire} for field {field}")
    return out


def _pb_read_varint(data: bytes, i: int) -> Tuple[int, int]:
    n, shift = 0, 0
    while True:
        b = data[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


class ConnectError(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def connect_start(base_url: str, token: str, request: bytes, timeout_ms: int) -> List[Tuple[str, Any]]:
    """One server-streaming Start call: the events as (kind, value) pairs,
    as parse_command_session_start_event reads them, or ConnectError."""
    body = b"\x00" + len(request).to_bytes(4, "big") + request
    req = urllib.request.Request(
        f"{base_url}/command_session.CommandSession/Start", data=body, method="POST",
        headers={"Content-Type": "application/connect+proto", "Connect-Protocol-Version": "1",
                 "Connect-Timeout-Ms": str(timeout_ms), "Authorization": f"Bearer {token}",
                 "User-Agent": USER_AGENT})
    try:
        with _OPENER.open(req, timeout=timeout_ms / 1000 + 10) as resp:
            raw = resp.read()
    except urllib.error.HTTPError as exc:
        raise ConnectError(f"http_{exc.code}", exc.read().decode("utf-8", "replace")) from None
    events: List[Tuple[str, Any]] = []
    i = 0
    while i + 5 <= len(raw):
        flags, n = raw[i], int.from_bytes(raw[i + 1:i + 5], "big")
        payload = raw[i + 5:i + 5 + n]
        i += 5 + n
        if flags & 0x02:  # end of stream: {} or {"error": {code, message}}
            end = json.loads(payload or b"{}")
            if "error" in end:
                raise ConnectError(end["error"].get("code", "unknown"), end["error"].get("message", ""))
            return events
        for field, value in _pb_fields(payload):
            if field != 1:
                continue
            for kind, inner in _pb_fields(value):
                sub = dict((f, v) for f, v in _pb_fields(inner)) if isinstance(inner, bytes) else {}
                if kind == 1:
                    events.append(("start", sub.get(1, 0)))
                elif kind == 2:
                    for f, v in _pb_fields(inner):
                        events.append(("stderr" if f == 2 else "stdout", v))
                elif kind == 3:
                    z = sub.get(1, 0)
                    events.append(("end", (z >> 1) ^ -(z & 1)))  # sint32 (zigzag)
                elif kind == 4:
                    events.append(("keepalive", None))
    raise ConnectError("unknown", "the stream ended without an end-of-stream message")


# ---------------------------------------------------------------------------
# The run


class Run:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.c = Client(args.base_url, args.api_key)
        self.tag = uuid.uuid4().hex[:8]
        self.label = f"sdkcompat-{self.tag}"
        self.passed = 0
        self.failures: List[Mismatch] = []
        self.ctx: Dict[str, Any] = {}

    # -- reporting --------------------------------------------------------

    def ok(self, check: str, detail: str = "") -> None:
        self.passed += 1
        print(f"PASS {check}" + (f" — {detail}" if detail else ""), flush=True)

    def expect(self, cond: bool, check: str, message: str) -> None:
        if not cond:
            raise Mismatch(check, f"[contract] {message}")

    # -- SDK calls ---------------------------------------------------------

    def call(self, check: str, method: str, endpoint: str, model: Any, source: str, *,
             params: Optional[Dict[str, Any]] = None, json_body: Any = None,
             idempotent_post: bool = False) -> Tuple[Dict[str, Any], Dict[str, Any], Response]:
        try:
            raw, resp = self.c.request(method, endpoint, params=params, json_body=json_body,
                                       idempotent_post=idempotent_post, check=check)
        except SDKError as exc:
            raise Mismatch(check, f"[sdk-error] {exc.response.describe()}: the SDK raises "
                                  f"{exc.kind}({exc.message!r}) where a 2xx answer was expected") from None
        parsed = sdk_parse(model, raw, check, f"{method} /api/v1{endpoint}", source) if model else raw
        return parsed, raw, resp

    def call_error(self, check: str, method: str, endpoint: str, *, params=None, json_body=None,
                   api_key: Any = MISSING) -> SDKError:
        saved = self.c.api_key
        if api_key is not MISSING:
            self.c.api_key = api_key
        try:
            raw, resp = self.c.request(method, endpoint, params=params, json_body=json_body, check=check)
        except SDKError as exc:
            return exc
        finally:
            self.c.api_key = saved
        raise Mismatch(check, f"[contract] {resp.describe()}: expected an error status, got a 2xx answer")

    def create(self, check: str, payload: Dict[str, Any]) -> Dict[str, Any]:
        sb, raw, _ = self.call(check, "POST", "/sandbox", SandboxModel,
                               f"{SRC_MODELS} Sandbox; {SRC_SANDBOX} create()",
                               json_body=payload, idempotent_post=True)
        return sb

    def get(self, check: str, sandbox_id: str) -> Dict[str, Any]:
        sb, _, _ = self.call(check, "GET", f"/sandbox/{sandbox_id}", SandboxModel,
                             f"{SRC_MODELS} Sandbox; {SRC_SANDBOX} get()")
        return sb

    def list(self, check: str, *, labels: Optional[List[str]] = None, page: int = 1,
             per_page: int = 50, exclude_terminated: Optional[bool] = None,
             status: Optional[str] = None) -> Dict[str, Any]:
        params: Dict[str, Any] = {"page": page, "per_page": per_page}
        if status:
            params["status"] = status
        if labels:
            params["labels"] = labels
        if exclude_terminated is not None:
            params["is_active"] = exclude_terminated
        out, _, _ = self.call(check, "GET", "/sandbox", SandboxListResponseModel,
                              f"{SRC_MODELS} SandboxListResponse; {SRC_SANDBOX} list()", params=params)
        return out

    def statuses(self, check: str, ids: List[str]) -> Dict[str, Any]:
        if not ids or len(ids) > 100 or len(set(ids)) != len(ids):
            raise ValueError("the SDK only sends 1-100 unique ids")
        try:
            raw, resp = self.c.request("POST", "/sandbox/status:batchGet", json_body={"sandbox_ids": ids},
                                       idempotent_post=True, check=check)
        except SDKError as exc:
            if "HTTP 404" in exc.message or "HTTP 405" in exc.message:
                raise Mismatch(check, f"[sdk-behaviour] {exc.response.describe()}: the SDK treats "
                                      f"'HTTP 404'/'HTTP 405' as 'batch status unsupported' and switches "
                                      f"to per-id GET /sandbox/{{id}} for the client's lifetime "
                                      f"({SRC_SANDBOX} get_sandbox_statuses())") from None
            raise Mismatch(check, f"[sdk-error] {exc.response.describe()}: the SDK raises "
                                  f"{exc.kind}({exc.message!r})") from None
        out = sdk_parse(BatchSandboxStatusResponseModel, raw, check, "POST /api/v1/sandbox/status:batchGet",
                        f"{SRC_MODELS} BatchSandboxStatusResponse")
        seen: Dict[str, str] = {}
        for s in out["statuses"]:
            self.expect(s["sandbox_id"] not in seen, check,
                        f"status:batchGet lists {s['sandbox_id']} twice (statuses/errors)")
            seen[s["sandbox_id"]] = "statuses"
        for e in out["errors"]:
            self.expect(e["sandbox_id"] not in seen, check,
                        f"status:batchGet lists {e['sandbox_id']} in both statuses and errors")
            seen[e["sandbox_id"]] = "errors"
        missing = [i for i in ids if i not in seen]
        self.expect(not missing, check,
                    f"status:batchGet omitted {missing}; every requested id must appear in statuses or "
                    f"errors, an omitted one fails its waiter with 'Batch status response omitted' "
                    f"({SRC_SANDBOX} _SyncRequestBatcher._dispatch)")
        extra = [i for i in seen if i not in ids]
        self.expect(not extra, check, f"status:batchGet answered ids that were not requested: {extra}")
        return out

    def get_network(self, check: str, sandbox_id: str) -> Dict[str, Any]:
        out, _, _ = self.call(check, "GET", f"/sandbox/{sandbox_id}/egress-policy", EgressPolicyStatusModel,
                              f"{SRC_MODELS} EgressPolicyStatus; {SRC_SANDBOX} get_network()")
        self.check_policy_consistency(check, out)
        return out

    def set_network(self, check: str, sandbox_id: str, *, allow=None, deny=None) -> Tuple[Dict[str, Any], Dict]:
        payload = network_update_payload(allow, deny)
        out, _, resp = self.call(check, "PUT", f"/sandbox/{sandbox_id}/egress-policy", EgressPolicyStatusModel,
                                 f"{SRC_MODELS} EgressPolicyStatus; {SRC_SANDBOX} set_network()",
                                 json_body=payload)
        self.expect(resp.status == 202, check,
                    f"{resp.describe()}: the 2026 contract answers an egress PUT with 202 once the desired "
                    f"generation is persisted (update-sandbox-egress-policy-endpoint); the SDK accepts any 2xx")
        self.check_policy_consistency(check, out)
        return out, payload

    def check_policy_consistency(self, check: str, st: Dict[str, Any]) -> None:
        self.expect(st["applied"] == (st["applied_generation"] >= st["generation"]), check,
                    f"egress status says applied={st['applied']} with generation={st['generation']} and "
                    f"applied_generation={st['applied_generation']}; applied must mean "
                    f"applied_generation >= generation; the SDK calls it applied once the data plane enforces the current generation")
        self.expect(st["applied_generation"] >= -1, check,
                    f"applied_generation={st['applied_generation']} is below -1")
        self.expect(st["applied_generation"] <= st["generation"], check,
                    f"applied_generation={st['applied_generation']} is ahead of generation={st['generation']}")

    def wait_applied(self, check: str, sandbox_id: str, generation: int) -> Dict[str, Any]:
        """verifiers prepare_execution: 0.1, 0.2, 0.4 ... s (cap 3 s, here shortened) until applied."""
        deadline = time.monotonic() + self.args.apply_timeout
        delay = 0.05
        polls = 0
        while True:
            st = self.get_network(check, sandbox_id)
            polls += 1
            self.expect(st["generation"] >= generation, check,
                        f"GET egress-policy reports generation {st['generation']} after a PUT returned "
                        f"generation {generation}: generations must not go backwards")
            if st["applied"] and st["applied_generation"] >= generation:
                return {**st, "_polls": polls}
            if time.monotonic() >= deadline:
                raise Mismatch(check, f"[contract] generation {generation} not applied within "
                                      f"{self.args.apply_timeout}s (last: {_short(st)}); the mock's "
                                      f"data plane should apply it after -apply-delay")
            time.sleep(delay)
            delay = min(delay * 2, 0.5)

    def wait_for_creation(self, check: str, ids: List[str]) -> Dict[str, Any]:
        """sandbox.py wait_for_creation, coalesced into one status:batchGet per poll.

        Delay before poll i: min(initial * 1.5**i, max) +/- 25 % (here initial
        0.05 s, max 0.5 s instead of 1 s / 10 s). A terminal status fails.
        """
        deadline = time.monotonic() + self.args.wait_timeout
        pending = list(ids)
        seen: Dict[str, List[str]] = {i: [] for i in ids}
        i = 0
        while pending:
            delay = min(0.05 * 1.5 ** i, 0.5)
            time.sleep(max(0.0, delay + random.uniform(-delay * 0.25, delay * 0.25)))
            i += 1
            out = self.statuses(check, pending)
            for err in out["errors"]:
                raise Mismatch(check, f"[contract] status:batchGet reports {err['sandbox_id']}: "
                                      f"{err['code']}: {err['message']} for a sandbox just created; "
                                      f"the SDK waiter fails with that error")
            for s in out["statuses"]:
                sid, status = s["sandbox_id"], s["status"]
                if not seen[sid] or seen[sid][-1] != status:
                    seen[sid].append(status)
                if status in TERMINAL:
                    raise Mismatch(check, f"[contract] {sid} reached {status} "
                                          f"({s.get('error_type')}: {s.get('error_message')}) while "
                                          f"waiting for RUNNING")
                if status == "RUNNING":
                    pending.remove(sid)
            if pending and time.monotonic() >= deadline:
                raise Mismatch(check, f"[contract] {pending} not RUNNING within {self.args.wait_timeout}s "
                                      f"(statuses seen: {seen})")
        return {"polls": i, "seen": seen}

    # -- steps -------------------------------------------------------------

    def step_create(self) -> None:
        # verifiers-shaped VM: vm=True, no string command, cpu/memory/disk always sent,
        # timeout -1 (unbounded) with an idle timeout, plus an argv start command.
        ck = "create.vm"
        vm_req = create_payload(
            f"sdkcompat-vm-{self.tag}", "ubuntu:22.04", vm=True,
            # Runs while the sandbox runs: its exit would stop the sandbox (2026
            # contract: a start command is one-shot).
            start_command=VM_START_COMMAND,
            memory_gb=2.0, timeout_minutes=-1, idle_timeout_minutes=60,
            labels=[self.label, "sdkcompat", "vm"],
        )
        vm = self.create(ck, vm_req)
        self.check_echo(ck, vm, vm_req)
        self.expect(vm["start_command"] == VM_START_COMMAND, ck,
                    f"POST /sandbox: startCommand should echo the argv object, got {_short(vm['start_command'])}")
        self.expect(vm["timeout_minutes"] == -1 and vm["idle_timeout_minutes"] == 60, ck,
                    f"POST /sandbox: timeoutMinutes/idleTimeoutMinutes should echo -1/60, got "
                    f"{vm['timeout_minutes']}/{vm['idle_timeout_minutes']}")
        self.ctx["vm"] = vm
        self.ctx["vm_req"] = vm_req
        self.ok(ck, f"id={vm['id']} status={vm['status']} vm=true startCommand={vm['start_command']}")

        # The SDK reuses one idempotency_key across its transport retries of a
        # create (502/503/504, read errors): a replay must not create a second sandbox.
        ck = "create.idempotent-replay"
        again = self.create(ck, vm_req)
        self.expect(again["id"] == vm["id"], ck,
                    f"POST /sandbox replayed with idempotency_key={vm_req['idempotency_key']} returned a "
                    f"new sandbox {again['id']} instead of {vm['id']}; the SDK reuses one idempotency_key across its create retries")
        self.ok(ck, f"same id {again['id']}")

        # The most common SDK call, CreateSandboxRequest(name=..., docker_image=...)
        # with vm unset, here with what the container used to carry (env, secrets).
        # 0.2.39 keeps the "tail -f /dev/null" default on the wire and omits vm
        # (PR #820/#834); the platform makes a VM and drops the legacy string.
        # This is the run's second VM ("vm2").
        ck = "create.sdk-default-vm-unset"
        req = create_payload(
            f"sdkcompat-default-{self.tag}", "python:3.11-slim",
            environment_vars={"FOO": "bar"}, secrets={"API_TOKEN": "s3cr3t-value"},
            labels=[self.label, "sdkcompat", "default"],
        )
        self.expect("vm" not in req and req.get("start_command") == DEFAULT_SHELL_COMMAND
                    and req["cpu_cores"] == 1.0 and isinstance(req["cpu_cores"], float), ck,
                    "internal: default payload shape")
        try:
            raw, _ = self.c.request("POST", "/sandbox", json_body=req, idempotent_post=True, check=ck)
        except SDKError as exc:
            raise Mismatch(ck, f"[sdk-error] {exc.response.describe()}: the SDK's default create "
                               f"(vm unset) sends start_command={DEFAULT_SHELL_COMMAND!r}, cpu_cores 1.0 and "
                               f"no 'vm' key (0.2.39 CreateSandboxRequest default, serialized by {SRC_SANDBOX} "
                               f"create() via model_dump(exclude_none=True); PR #820: 'the default \"tail -f "
                               f"/dev/null\" start command remains serialized'), and the platform accepts it (a VM, "
                               f"legacy string dropped, 1.0 is a whole vCPU). The SDK "
                               f"raises {exc.kind}({exc.message!r})") from None
        vm2 = sdk_parse(SandboxModel, raw, ck, "POST /api/v1/sandbox", f"{SRC_MODELS} Sandbox")
        self.check_echo(ck, vm2, req)
        self.expect(vm2["start_command"] is None, ck,
                    f"POST /sandbox: the legacy string start command is dropped on a VM, so startCommand "
                    f"should be null, got {_short(vm2['start_command'])}")
        if vm2["secrets"] is not None:
            self.expect(all(v != "s3cr3t-value" for v in vm2["secrets"].values()), ck,
                        "POST /sandbox: secrets come back in plain text; the platform masks them "
                        "(the SDK's README: secrets come back masked as '***')")
        self.ctx["vm2"] = vm2
        self.ok(ck, f"id={vm2['id']} status={vm2['status']} vm={vm2['vm']} startCommand={vm2['start_command']!r}")

        # create(vm=False), as a 0.2.39 user still can: the platform retired
        # containers and answers 410, which the SDK raises as APIError.
        ck = "create.container-retired"
        ctr_req = create_payload(
            f"sdkcompat-ctr-{self.tag}", "python:3.11-slim", vm=False,
            environment_vars={"FOO": "bar"}, secrets={"API_TOKEN": "s3cr3t-value"},
            labels=[self.label, "sdkcompat", "container"],
        )
        self.expect(ctr_req.get("vm") is False and ctr_req["start_command"] == DEFAULT_SHELL_COMMAND, ck,
                    "internal: container payload shape")
        err = self.create_refused(ck, ctr_req, 410)
        self.expect(err.message == f"HTTP 410: {CONTAINERS_RETIRED_DETAIL}", ck,
                    f"{err.response.describe()}: the SDK should raise APIError('HTTP 410: "
                    f"{CONTAINERS_RETIRED_DETAIL}'), got {err.kind}({err.message!r})")
        self.ok(ck, f"{err.kind}({err.message!r})")

    def create_refused(self, ck: str, payload: Dict[str, Any], status: int) -> SDKError:
        """A create the SDK sends and the platform refuses: the SDK raises APIError
        with the {"detail": ...} text, and no sandbox exists under the name."""
        err = self.call_error(ck, "POST", "/sandbox", json_body=payload)
        self.check_detail_error(ck, err, status)
        self.expect(err.kind == "APIError" and err.message.startswith(f"HTTP {status}: "), ck,
                    f"{err.response.describe()}: the SDK should raise APIError('HTTP {status}: ...'), got "
                    f"{err.kind}({err.message!r})")
        left = [s["id"] for s in self.list(ck, labels=[self.label])["sandboxes"] if s["name"] == payload["name"]]
        self.expect(not left, ck, f"a refused create left sandbox(es) {left} named {payload['name']!r}")
        return err

    def check_echo(self, ck: str, sb: Dict[str, Any], req: Dict[str, Any]) -> None:
        self.expect(sb["name"] == req["name"], ck, f"POST /sandbox: name {sb['name']!r} != sent {req['name']!r}")
        self.expect(sb["docker_image"] == req["docker_image"], ck,
                    f"POST /sandbox: dockerImage {sb['docker_image']!r} != sent {req['docker_image']!r}")
        self.expect(sb["vm"] is True, ck, f"POST /sandbox: key vm is {sb['vm']!r}, sent vm={req.get('vm', 'unset')}; "
                                          f"every sandbox is a VM")
        self.expect(sb["labels"] == req["labels"], ck,
                    f"POST /sandbox: labels {sb['labels']} != sent {req['labels']}")
        for k in ("cpu_cores", "memory_gb", "disk_size_gb"):
            self.expect(sb[k] == req[k], ck, f"POST /sandbox: {k} {sb[k]} != sent {req[k]}")
        self.expect(sb["gpu_count"] == 0, ck, f"POST /sandbox: gpuCount {sb['gpu_count']} != 0")
        self.expect(sb["status"] in ("PENDING", "PROVISIONING", "RUNNING"), ck,
                    f"POST /sandbox: a fresh sandbox has status {sb['status']!r}; the SDK's live tests "
                    f"accept PENDING, PROVISIONING or RUNNING")
        self.expect(sb["status"] in STATUS_ENUM, ck, f"status {sb['status']!r} is not one of {STATUS_ENUM}")

    def step_wait(self) -> None:
        ck = "wait.status-batchGet"
        ids = [self.ctx["vm2"]["id"], self.ctx["vm"]["id"]]
        res = self.wait_for_creation(ck, ids)
        self.ok(ck, f"both RUNNING after {res['polls']} coalesced polls; transitions {res['seen']}")

        ck = "batchGet.unknown-id"
        ghost = f"c{uuid.uuid4().hex[:24]}"
        out = self.statuses(ck, [ids[0], ghost])
        errs = {e["sandbox_id"]: e for e in out["errors"]}
        self.expect(ghost in errs, ck, f"unknown id {ghost} should be in errors (code NOT_FOUND), got {_short(out)}")
        self.expect(errs[ghost]["code"] == "NOT_FOUND", ck,
                    f"unknown id should have code NOT_FOUND, got {errs[ghost]['code']}")
        self.ok(ck, "200 with errors[NOT_FOUND], not a top-level 404/405")

    def step_list_get(self) -> None:
        ck = "list.paging-per_page=1"
        ids = {self.ctx["vm2"]["id"], self.ctx["vm"]["id"]}
        got: List[str] = []
        page = 1
        while True:
            out = self.list(ck, labels=[self.label, "sdkcompat"], page=page, per_page=1, exclude_terminated=True)
            self.expect(out["page"] == page and out["per_page"] == 1, ck,
                        f"GET /sandbox?page={page}&per_page=1: envelope says page={out['page']} "
                        f"perPage={out['per_page']}")
            self.expect(len(out["sandboxes"]) <= 1, ck, f"page {page} holds {len(out['sandboxes'])} items with per_page=1")
            self.expect(out["total"] == 2, ck,
                        f"GET /sandbox labels={self.label},sdkcompat is_active=true: total={out['total']}, "
                        f"expected 2 (the two VMs; the refused container create and the idempotent replay "
                        f"must not add one)")
            got += [s["id"] for s in out["sandboxes"]]
            if not out["has_next"]:
                break
            page += 1
            self.expect(page <= 5, ck, "hasNext never became false")
        self.expect(sorted(got) == sorted(ids), ck, f"paged ids {got} != created {sorted(ids)}")
        self.ok(ck, f"{page} pages, ids {got}")

        ck = "list.labels-all-of"
        out = self.list(ck, labels=[self.label, "vm"], exclude_terminated=True)
        self.expect([s["id"] for s in out["sandboxes"]] == [self.ctx["vm"]["id"]], ck,
                    f"labels={self.label}&labels=vm should match only the VM (ALL-of), got "
                    f"{[s['id'] for s in out['sandboxes']]}")
        self.ok(ck, "repeated labels= are ALL-of")

        for key in ("vm2", "vm"):
            ck = f"get.{key}"
            sb = self.get(ck, self.ctx[key]["id"])
            self.expect(sb["status"] == "RUNNING", ck, f"GET /sandbox/{sb['id']}: status {sb['status']} after batchGet said RUNNING")
            self.expect(sb["started_at"] is not None, ck, f"GET /sandbox/{sb['id']}: startedAt is null while RUNNING")
            self.ctx[key] = sb
            self.ok(ck, f"RUNNING, startedAt={sb['started_at'].isoformat()}")

    def step_egress(self) -> None:
        vm_id = self.ctx["vm"]["id"]

        ck = "egress.get-initial"
        st = self.get_network(ck, vm_id)
        self.expect(st["generation"] == 0, ck, f"a fresh VM should report generation 0, got {st['generation']}")
        self.expect(st["policy"]["allowlist"] is None and st["policy"]["denylist"] == [], ck,
                    f"a fresh VM without lists should report policy {{allowlist: null, denylist: []}} "
                    f"(SDK test fixture), got {_short(st['policy'])}")
        self.ok(ck, _short({k: st[k] for k in ("policy", "generation", "applied_generation", "applied")}))
        gen = st["generation"]

        cases = [
            ("egress.set-allow", {"allow": ["api.example.com", "10.0.0.0/8"]},
             {"allowlist": ["api.example.com", "10.0.0.0/8"], "denylist": None}),
            ("egress.set-deny", {"deny": ["ads.example.com"]},
             {"allowlist": None, "denylist": ["ads.example.com"]}),
            ("egress.set-allow-star", {"allow": ["*"]}, {"allowlist": None, "denylist": []}),
            ("egress.set-deny-star", {"deny": ["*"]}, {"allowlist": [], "denylist": None}),
        ]
        for ck, kwargs, want_policy in cases:
            st, payload = self.set_network(ck, vm_id, **kwargs)
            self.expect(payload == want_policy, ck, f"internal: SDK payload {payload} != {want_policy}")
            self.expect(st["generation"] == gen + 1, ck,
                        f"PUT egress-policy {_short(payload)}: generation {st['generation']}, expected "
                        f"{gen + 1} (each accepted PUT adds 1)")
            gen = st["generation"]
            self.expect(st["policy"] == want_policy, ck,
                        f"PUT egress-policy {_short(payload)}: response policy {_short(st['policy'])} "
                        f"should equal the full replacement {_short(want_policy)}")
            applied = self.wait_applied(ck + ".wait-applied", vm_id, gen)
            self.ok(ck, f"sent {_short(payload)} -> generation {gen}, applied after {applied['_polls']} GET(s)")

        ck = "egress.rules-object"
        body = {"allowlist": [], "denylist": None, "rules": {}}
        st, _, resp = self.call(ck, "PUT", f"/sandbox/{vm_id}/egress-policy", EgressPolicyStatusModel,
                                "2026 contract: the PUT body gained a rules object", json_body=body)
        gen = st["generation"]
        self.expect(resp.status == 202 and st["policy"] == {"allowlist": [], "denylist": None}, ck,
                    f"PUT with rules {{}}: {resp.describe()} {_short(st)}")
        self.wait_applied(ck + ".wait-applied", vm_id, gen)
        err = self.call_error(ck, "PUT", f"/sandbox/{vm_id}/egress-policy",
                              json_body={"allowlist": [], "denylist": None, "rules": "all"})
        self.check_detail_error(ck, err, 422)
        self.ok(ck, "rules {} accepted with 202; rules that is not an object is 422")

        ck = "egress.sandbox-mirror"
        sb = self.get(ck, vm_id)
        self.expect(sb["network_allowlist"] == [] and sb["network_denylist"] is None, ck,
                    f"GET /sandbox/{vm_id}: networkAllowlist/networkDenylist should mirror the desired "
                    f"policy ([] / null after deny=['*']), got {sb['network_allowlist']} / {sb['network_denylist']}")
        self.ok(ck, "networkAllowlist=[] networkDenylist=null")

        for ck, body in (
            ("errors.422-invalid-egress-entry", {"allowlist": ["https://example.com"], "denylist": None}),
            ("errors.422-bare-star-entry", {"allowlist": ["*"], "denylist": None}),
        ):
            err = self.call_error(ck, "PUT", f"/sandbox/{vm_id}/egress-policy", json_body=body)
            self.check_detail_error(ck, err, 422)
            self.ok(ck, f"{err.kind}({err.message!r})")
        ck = "egress.unchanged-after-rejected-put"
        st = self.get_network(ck, vm_id)
        self.expect(st["generation"] == gen, ck, f"a rejected PUT changed generation {gen} -> {st['generation']}")
        self.ok(ck, f"generation still {gen}")

        # Egress was VM-only; now every sandbox is a VM, the SDK's default create too.
        ck = "egress.sdk-default-vm"
        st = self.get_network(ck, self.ctx["vm2"]["id"])
        self.expect(st["generation"] == 0 and st["policy"] == {"allowlist": None, "denylist": []}, ck,
                    f"the SDK-default VM (vm unset, no lists) should report generation 0 and policy "
                    f"{{allowlist: null, denylist: []}}, got {_short(st)}")
        self.ok(ck, "the vm-unset sandbox has an egress policy like any VM")

    def check_detail_error(self, ck: str, err: SDKError, status: int) -> None:
        r = err.response
        self.expect(r.status == status, ck, f"{r.describe()}: expected HTTP {status}")
        try:
            body = json.loads(r.body)
        except ValueError:
            body = None
        self.expect(isinstance(body, dict) and "detail" in body, ck,
                    f"{r.describe()}: error bodies are {{\"detail\": ...}}; the SDK then says "
                    f"'HTTP {status}: <detail>' ({SRC_CLIENT} request())")
        d = body["detail"]
        self.expect(isinstance(d, (str, list)) and bool(d), ck,
                    f"{r.describe()}: detail should be a non-empty string (or FastAPI list), got {_short(d)}")

    def step_logs_auth(self) -> None:
        for key in ("vm", "vm2"):
            ck = f"logs.{key}"
            sid = self.ctx[key]["id"]
            out, _, _ = self.call(ck, "GET", f"/sandbox/{sid}/logs", SandboxLogsResponseModel,
                                  f"{SRC_MODELS} SandboxLogsResponse; {SRC_SANDBOX} get_logs()")
            self.ok(ck, f"{len(out['logs'])} characters of logs")

        now = dt.datetime.now(dt.timezone.utc)
        for key in ("vm", "vm2"):
            ck = f"auth.{key}"
            sid = self.ctx[key]["id"]
            # SandboxAuthCache.get_or_refresh: POST /sandbox/{id}/auth, no body, idempotent_post=True.
            raw, _, resp = self.call(ck, "POST", f"/sandbox/{sid}/auth", None, "", idempotent_post=True)
            auth = sdk_parse(validate_auth, raw, ck, f"POST /api/v1/sandbox/{sid}/auth",
                             f"{SRC_SANDBOX} SandboxAuthCache/_auth_refresh_cutoff")
            # _auth_refresh_cutoff: expires_at - 60 s must be in the future or every
            # call re-fetches a token (the cache considers it stale immediately).
            self.expect(auth["_expires"] - dt.timedelta(seconds=60) > now, ck,
                        f"expires_at {auth['expires_at']} is within the SDK's 60 s refresh margin of now "
                        f"({now.isoformat()}); the token would never be cached")
            self.ctx[f"auth_{key}"] = auth
            self.ok(ck, f"expires_at={auth['expires_at']} parses with Python 3.10 fromisoformat")

        # Reachability as wait_for_creation does it after RUNNING, for both VMs
        # (the vm=True one and the SDK-default one): execute_command("echo
        # 'sandbox ready'") over Connect, retrying not_found (RUNNING can
        # briefly lead gateway registration), unavailable, aborted and
        # deadline_exceeded (_is_retryable_reachability_error).
        for key in ("vm", "vm2"):
            ck = f"exec.{key}-connect-reachability"
            events, misses = self.connect_reachability(ck, key)
            self.check_connect_events(ck, events, "sandbox ready\n", "", 0)
            self.ok(ck, f"{len(events)} events, after {misses} retried error(s)")

        auth = self.ctx["auth_vm"]
        base = self.gateway_base("vm")
        ck = "exec.vm-connect-command"
        try:
            events = connect_start(base, auth["token"], encode_start_request(
                'echo "$GREETING"; pwd; echo warn >&2; exit 3', {"GREETING": "hello vm"}, "/tmp"), 10_000)
        except ConnectError as exc:
            raise Mismatch(ck, f"[sdk-error] Connect Start: {exc}") from None
        self.check_connect_events(ck, events, "hello vm\n/tmp\n", "warn\n", 3)
        self.ok(ck, "stdout, stderr, env, working dir and exit code as the SDK collects them")

        ck = "exec.vm-connect-deadline"
        try:
            connect_start(base, auth["token"], encode_start_request("sleep 5", {}, None), 300)
            raise Mismatch(ck, "[contract] Start outlived Connect-Timeout-Ms 300 without an error")
        except ConnectError as exc:
            self.expect(exc.code == "deadline_exceeded", ck,
                        f"a command past Connect-Timeout-Ms should end the stream with deadline_exceeded "
                        f"(the SDK then reports a command timeout), got {exc}")
        self.ok(ck, "deadline_exceeded")

        # Every command runs over Connect RPC (command_session.CommandSession/Start).
        # REST exec was the containers' transport (the SDK never sent it for a
        # VM); with the containers it is gone: the route is not served.
        ck = "exec.rest-route-gone"
        url = f"{self.gateway_base('vm')}/exec"
        payload = {"command": "echo hi", "working_dir": None, "env": {},
                   "sandbox_id": self.ctx["vm"]["id"], "timeout": 10}
        r = self.c.raw("POST", url, json_body=payload, timeout=15,
                       headers=self.gateway_headers("vm", "application/json"))
        self.expect(400 <= r.status < 500 and r.status not in (401, 403), ck,
                    f"{r.describe()}: REST exec should not be served (a 4xx other than an auth refusal); "
                    f"commands run over Connect RPC only")
        self.ok(ck, f"HTTP {r.status}")

    def connect_reachability(self, ck: str, key: str) -> Tuple[List[Tuple[str, Any]], int]:
        base, token = self.gateway_base(key), self.ctx[f"auth_{key}"]["token"]
        deadline = time.monotonic() + self.args.wait_timeout
        misses = 0
        while True:
            try:
                events = connect_start(base, token, encode_start_request("echo 'sandbox ready'", {}, None), 10_000)
                return events, misses
            except ConnectError as exc:
                if exc.code in ("not_found", "unavailable", "aborted", "deadline_exceeded") and time.monotonic() < deadline:
                    misses += 1
                    time.sleep(0.1)
                    continue
                raise Mismatch(ck, f"[sdk-error] Connect Start on {base}: {exc}; the SDK raises APIError") from None

    # -- files and background jobs -------------------------------------------

    def gateway_base(self, key: str) -> str:
        auth = self.ctx[f"auth_{key}"]
        return f"{auth['gateway_url'].rstrip('/')}/{auth['user_ns']}/{auth['job_id']}"

    def gateway_headers(self, key: str, content_type: Optional[str] = None) -> Dict[str, str]:
        h = {"Authorization": f"Bearer {self.ctx[f'auth_{key}']['token']}", "User-Agent": USER_AGENT}
        if content_type:
            h["Content-Type"] = content_type
        return h

    def raw_upload(self, key: str, path: str, content: bytes, filename: str) -> "Response":
        """The request upload_bytes sends, answered as it comes."""
        sid = self.ctx[key]["id"]
        url = f"{self.gateway_base(key)}/upload?{encode_params({'path': path, 'sandbox_id': sid})}"
        body, ctype = httpx_multipart("file", filename, content)
        req = urllib.request.Request(url, data=body, method="POST", headers=self.gateway_headers(key, ctype))
        self.c.requests += 1
        try:
            with _OPENER.open(req, timeout=60) as resp:
                return Response("POST", url, resp.status, dict(resp.headers), resp.read(), None)
        except urllib.error.HTTPError as exc:
            return Response("POST", url, exc.code, dict(exc.headers or {}), exc.read(), None)

    def upload_bytes(self, ck: str, key: str, path: str, content: bytes, filename: str) -> Dict[str, Any]:
        """sandbox.py upload_bytes: POST {base}/upload?path=&sandbox_id=, multipart files={"file": ...}."""
        r = self.raw_upload(key, path, content, filename)
        url = r.url
        self.expect(r.status == 200, ck, f"{r.describe()}: upload_bytes calls raise_for_status(); "
                                         f"the SDK raises APIError('Upload failed: ...')")
        try:
            raw = json.loads(r.body)
        except ValueError:
            raise Mismatch(ck, f"[sdk-parse] {r.describe()}: not JSON; FileUploadResponse.model_validate(response.json()) fails") from None
        out = sdk_parse(FileUploadResponseModel, raw, ck, f"POST {url}", f"{SRC_MODELS} FileUploadResponse")
        self.expect(out["success"] is True and out["path"] == path and out["size"] == len(content), ck,
                    f"upload answer {raw}: the SDK's tests assert success and path == the remote path "
                    f"(size {len(content)} sent)")
        return out

    def gateway_get(self, key: str, route: str, params: Dict[str, Any]) -> Response:
        url = f"{self.gateway_base(key)}/{route}?{encode_params(params)}"
        return self.c.raw("GET", url, headers=self.gateway_headers(key), timeout=30)

    def read_file(self, ck: str, key: str, path: str, offset: Optional[int] = None,
                  length: Optional[int] = None, allow_status: Optional[int] = None) -> Optional[Dict[str, Any]]:
        """sandbox.py read_file: params path[, offset, length] (no sandbox_id); 404 is
        SandboxFileNotFoundError (returned as None here), 413 SandboxFileTooLargeError."""
        params: Dict[str, Any] = {"path": path}
        if offset is not None:
            params["offset"] = offset
        if length is not None:
            params["length"] = length
        r = self.gateway_get(key, "read-file", params)
        if r.status == 404 or (allow_status is not None and r.status == allow_status):
            return None
        self.expect(r.status == 200, ck, f"{r.describe()}: read_file raises APIError on this status")
        try:
            raw = json.loads(r.body)
        except ValueError:
            raise Mismatch(ck, f"[sdk-parse] {r.describe()}: not JSON") from None
        return sdk_parse(ReadFileResponseModel, raw, ck, f"GET {r.url}", f"{SRC_MODELS} ReadFileResponse") | {"_raw": raw}

    def execute(self, ck: str, key: str, command: str, timeout: int = 30) -> Tuple[str, str, int]:
        """execute_command: Connect Start (every sandbox is a VM)."""
        try:
            events = connect_start(self.gateway_base(key), self.ctx[f"auth_{key}"]["token"],
                                   encode_start_request(command, {}, None), timeout * 1000)
        except ConnectError as exc:
            raise Mismatch(ck, f"[sdk-error] Connect Start: {exc}") from None
        out = "".join(v.decode("utf-8", "replace") for k, v in events if k == "stdout")
        err = "".join(v.decode("utf-8", "replace") for k, v in events if k == "stderr")
        ends = [v for k, v in events if k == "end"]
        self.expect(bool(ends), ck, "Command stream ended without exit code")
        return out, err, ends[-1]

    def get_background_job(self, ck: str, key: str, job_id: str) -> Dict[str, Any]:
        """sandbox.py get_background_job, polled as run_background_job polls it."""
        deadline = time.monotonic() + self.args.wait_timeout
        while True:
            exit_file = self.read_file(ck, key, f"/tmp/job_{job_id}.exit")
            content = exit_file["content"] if exit_file else ""
            if content.strip():
                try:
                    code = int(content.strip())
                    break
                except ValueError:
                    pass
            self.expect(time.monotonic() < deadline, ck,
                        f"job {job_id}'s exit file holds no integer after {self.args.wait_timeout}s ({content!r})")
            time.sleep(0.05)
        tails = {}
        for stream in ("stdout", "stderr"):
            out = self.read_file(ck, key, f"/tmp/job_{job_id}.{stream}.log",
                                 offset=-JOB_OUTPUT_TAIL_BYTES, length=JOB_OUTPUT_TAIL_BYTES)
            tails[stream] = (out["content"], bool(out["truncated"])) if out else ("", False)
            if out:
                # VMs ignore offset/length and omit the window keys: detectable as offset None.
                self.expect(out["offset"] is None and "total_size" not in out["_raw"] and "truncated" not in out["_raw"], ck,
                            f"VM read-file answered window keys {out['_raw']}; the SDK documents that VM "
                            f"sandboxes omit total_size/offset/truncated ({SRC_SANDBOX} read_file)")
        return {"completed": True, "exit_code": code, "stdout": tails["stdout"][0], "stderr": tails["stderr"][0],
                "stdout_truncated": tails["stdout"][1], "stderr_truncated": tails["stderr"][1]}

    def job_batch(self, ck: str, jobs: List[Tuple[str, str]]) -> Dict[str, Any]:
        """sandbox.py _request_background_job_status_batch: idempotent POST, timeout 30;
        HTTP 404/405 means unsupported (a mismatch here: the mock serves it)."""
        keys = [(s, j) for s, j in jobs]
        if not keys or len(keys) > 100 or len(set(keys)) != len(keys) or not all(re.fullmatch(r"[0-9A-Fa-f]{8}", j) for _, j in keys):
            raise ValueError("the SDK only sends 1-100 unique canonical jobs")
        body = {"jobs": [{"sandbox_id": s, "job_id": j} for s, j in jobs]}
        try:
            raw, resp = self.c.request("POST", "/sandbox/background-jobs/status:batchGet", json_body=body,
                                       idempotent_post=True, check=ck)
        except SDKError as exc:
            if "HTTP 404" in exc.message or "HTTP 405" in exc.message:
                raise Mismatch(ck, f"[sdk-behaviour] {exc.response.describe()}: the SDK reads HTTP 404/405 as "
                                   f"'batch unsupported' and falls back to per-job reads for good") from None
            raise Mismatch(ck, f"[sdk-error] {exc.response.describe()}: the SDK raises {exc.kind}({exc.message!r})") from None
        out = sdk_parse(BatchBackgroundJobStatusResponseModel, raw, ck,
                        "POST /api/v1/sandbox/background-jobs/status:batchGet",
                        f"{SRC_MODELS} BatchBackgroundJobStatusResponse")
        seen = [(x["sandbox_id"], x["job_id"]) for x in out["statuses"] + out["errors"]]
        self.expect(sorted(seen) == sorted(keys), ck,
                    f"the batch answered {seen} for {keys}: every job must be in exactly one list "
                    f"(an omitted one raises 'VM batch status response omitted job')")
        for st in out["statuses"]:
            self.expect(not st["completed"] or st["exit_code"] is not None, ck,
                        f"{st}: 'Completed VM background job omitted exit_code' ({SRC_SANDBOX} get_background_jobs)")
        return out

    def step_files_jobs(self) -> None:
        content = "Hello from bytes!\nLine 2\nLine 3\n\U0001f680".encode()
        for key in ("vm", "vm2"):
            ck = f"files.upload-{key}"
            remote = "/tmp/test_upload_bytes.txt"
            self.upload_bytes(ck, key, remote, content, "test_bytes.txt")
            out, err, code = self.execute(ck, key, f"cat {remote}; wc -c < {remote}")
            self.expect(code == 0 and out == content.decode() + f"{len(content)}\n", ck,
                        f"after the upload, cat and wc -c read {out!r} {err!r} exit {code}")
            self.ok(ck, f"FileUploadResponse, and the shell reads the {len(content)} bytes")

            ck = f"files.download-{key}"
            r = self.gateway_get(key, "download", {"path": remote, "sandbox_id": self.ctx[key]["id"]})
            self.expect(r.status == 200 and r.body == content, ck, f"{r.describe()}: download_file writes response.content")
            r = self.gateway_get(key, "download", {"path": "/tmp/nonexistent_file.txt", "sandbox_id": self.ctx[key]["id"]})
            self.expect(r.status >= 400 and r.status not in (401, 409), ck,
                        f"{r.describe()}: the SDK's test expects APIError for a missing file (not a retried status)")
            self.ok(ck, f"bytes round-trip; a missing file is HTTP {r.status}")

        ck = "files.upload-creates-parents"
        deep = "/tmp/sdkcompat/new/dir/parents.txt"
        self.upload_bytes(ck, "vm", deep, b"deep\n", "parents.txt")
        out, err, code = self.execute(ck, "vm", f"cat {deep}")
        self.expect(code == 0 and out == "deep\n", ck, f"after an upload into missing directories: {out!r} {err!r} {code}")
        self.ok(ck, "an upload creates the missing parent directories (2026 files guide)")

        ck = "files.upload-limit"
        big = b"x" * (16 * 1024 * 1024)
        self.upload_bytes(ck, "vm", "/tmp/sdkcompat/16mib.bin", big, "16mib.bin")
        r = self.raw_upload("vm", "/tmp/sdkcompat/over.bin", big + b"x", "over.bin")
        self.expect(r.status == 413, ck, f"{r.describe()}: an upload over 16 MiB must be refused (2026 files guide: "
                                         f"16 MiB per uploaded file)")
        r = self.gateway_get("vm", "download", {"path": "/tmp/sdkcompat/over.bin", "sandbox_id": self.ctx["vm"]["id"]})
        self.expect(r.status == 404, ck, f"{r.describe()}: a refused upload must leave nothing behind")
        self.ok(ck, "16 MiB accepted, 16 MiB + 1 byte refused with 413")

        ck = "files.read-file-limit"
        self.expect(self.read_file(ck, "vm", "/tmp/sdkcompat/16mib.bin", allow_status=413) is None, ck,
                    "read_file of a 16 MiB file must be 413 (SandboxFileTooLargeError: 10 MiB read limit)")
        ten = b"y" * (10 * 1024 * 1024)
        self.upload_bytes(ck, "vm", "/tmp/sdkcompat/10mib.txt", ten, "10mib.txt")
        got = self.read_file(ck, "vm", "/tmp/sdkcompat/10mib.txt")
        self.expect(got is not None and got["size"] == len(ten), ck, "read_file of exactly 10 MiB must succeed")
        self.ok(ck, "10 MiB read, 16 MiB refused with 413")

        # The SDK's read_file sends offset/length; containers answered the window,
        # VMs (now every sandbox) ignore it and omit total_size/offset/truncated.
        ck = "files.read-file-window-ignored"
        for key in ("vm", "vm2"):
            got = self.read_file(ck, key, "/tmp/test_upload_bytes.txt", offset=-4, length=4)
            self.expect(got is not None and got["content"] == content.decode() and got["offset"] is None
                        and got["size"] == len(content) and not {"total_size", "offset", "truncated"} & set(got["_raw"]), ck,
                        f"{key}: read-file must ignore offset/length and answer the whole file without the "
                        f"window keys, got {got and got['_raw']}")
        self.expect(self.read_file(ck, "vm", "/tmp/nope.txt") is None, ck, "read-file of a missing file should be 404")
        self.ok(ck, "both VMs ignore the window and omit its keys")

        # start_background_job / get_background_job over Connect on both VMs.
        jobs = {"vm": "c0ffee02", "vm2": "c0ffee03"}
        for key, job_id in jobs.items():
            ck = f"jobs.start_background_job-{key}"
            cmd = background_job_command(job_id, 'echo "job $GREETING"; pwd; echo warn >&2; exit 4',
                                         working_dir="/tmp", env={"GREETING": "it's here"})
            out, err, code = self.execute(ck, key, cmd, timeout=30)
            self.expect(code == 0 and out == "" and err == "", ck,
                        f"start_background_job's command should return at once with exit 0, got {out!r} {err!r} {code}")
            st = self.get_background_job(ck, key, job_id)
            self.expect(st["exit_code"] == 4 and st["stdout"] == "job it's here\n/tmp\n" and st["stderr"] == "warn\n"
                        and not st["stdout_truncated"], ck, f"get_background_job read {st}")
            self.ok(ck, f"exit {st['exit_code']}, logs as get_background_job reads them")

        ck = "jobs.get_background_jobs"
        vm_id, vm2_id = self.ctx["vm"]["id"], self.ctx["vm2"]["id"]
        out = self.job_batch(ck, [(vm_id, jobs["vm"]), (vm2_id, jobs["vm2"]), (vm_id, "0badf00d")])
        self.expect(not out["errors"], ck, f"batch errors for VM jobs: {out['errors']}")
        by_job = {x["job_id"]: x for x in out["statuses"]}
        for key in ("vm", "vm2"):
            self.expect(by_job[jobs[key]]["completed"] is True and by_job[jobs[key]]["exit_code"] == 4, ck,
                        f"the finished job on {key}: {by_job[jobs[key]]}")
        self.expect(by_job["0badf00d"]["completed"] is False, ck, f"a job without an exit file: {by_job['0badf00d']}")
        self.ok(ck, "BatchBackgroundJobStatusResponse across both VMs: completed with exit_code, and still running")

        # The batch's NOT_VM (a container's job) cannot happen any more; an
        # unknown sandbox is a per-job NOT_FOUND, not a top-level error.
        ck = "jobs.batch-unknown-sandbox"
        ghost = f"c{uuid.uuid4().hex[:24]}"
        out = self.job_batch(ck, [(ghost, "0badf00d")])
        self.expect([e["code"] for e in out["errors"]] == ["NOT_FOUND"], ck,
                    f"a job on an unknown sandbox should be a NOT_FOUND error, got {out}")
        self.ok(ck, "NOT_FOUND")

    def check_connect_events(self, ck: str, events: List[Tuple[str, Any]], stdout: str, stderr: str,
                             exit_code: int) -> None:
        """collect_command_session_start_event: stdout/stderr decoded with
        replacement, the last end's exit code; no end is an error."""
        kinds = [k for k, _ in events]
        self.expect(kinds and kinds[0] == "start" and events[0][1] > 0, ck,
                    f"the first event should be start with a pid (the SDK's live processes need it), got {kinds}")
        ends = [v for k, v in events if k == "end"]
        self.expect(bool(ends), ck, f"no end event: the SDK fails with 'Command stream ended without exit code' ({kinds})")
        out = "".join(v.decode("utf-8", "replace") for k, v in events if k == "stdout")
        err = "".join(v.decode("utf-8", "replace") for k, v in events if k == "stderr")
        self.expect((out, err, ends[-1]) == (stdout, stderr, exit_code), ck,
                    f"got stdout {out!r} stderr {err!r} exit {ends[-1]}, want {stdout!r} {stderr!r} {exit_code}")

    def step_errors(self) -> None:
        ghost = f"c{uuid.uuid4().hex[:24]}"
        for ck, method, ep in (
            ("errors.404-get", "GET", f"/sandbox/{ghost}"),
            ("errors.404-logs", "GET", f"/sandbox/{ghost}/logs"),
            ("errors.404-egress", "GET", f"/sandbox/{ghost}/egress-policy"),
            ("errors.404-delete", "DELETE", f"/sandbox/{ghost}"),
        ):
            err = self.call_error(ck, method, ep)
            self.check_detail_error(ck, err, 404)
            self.ok(ck, f"{err.kind}({err.message!r})")

        # The SDK itself refuses to send anything without a key ("No API key
        # configured. Set PRIME_API_KEY environment variable."); this checks
        # that the server side answers 401 to a request without Authorization.
        ck = "errors.401-no-key"
        err = self.call_error(ck, "GET", "/sandbox", params={"page": 1, "per_page": 50}, api_key=None)
        self.expect(err.response.status == 401 and err.kind == "UnauthorizedError", ck,
                    f"{err.response.describe()}: a request without Authorization should get 401 "
                    f"(-> UnauthorizedError)")
        try:
            body = json.loads(err.response.body)
        except ValueError:
            body = None
        self.expect(isinstance(body, dict), ck, f"{err.response.describe()}: the 401 body should be a JSON object")
        self.ok(ck, f"{err.kind}({err.message!r})")

    def step_delete(self) -> None:
        gone_id = self.ctx["vm2"]["id"]
        ck = "delete.vm2"
        out, _, _ = self.call(ck, "DELETE", f"/sandbox/{gone_id}", None, "")
        self.ok(ck, f"answer is a JSON object {_short(out)}")

        ck = "delete.get-after"
        try:
            sb = self.get(ck, gone_id)
            self.expect(sb["status"] == "TERMINATED", ck, f"GET after DELETE: status {sb['status']}, expected TERMINATED")
            self.expect(sb["terminated_at"] is not None, ck, "GET after DELETE: terminatedAt is null")
            detail = "TERMINATED with terminatedAt"
        except Mismatch as exc:
            if "HTTP 404" not in exc.message:
                raise
            detail = "gone (404)"
        self.ok(ck, detail)

        ck = "delete.batchGet-after"
        st = self.statuses(ck, [gone_id])
        if st["statuses"]:
            self.expect(st["statuses"][0]["status"] == "TERMINATED", ck,
                        f"status:batchGet after DELETE: {st['statuses'][0]['status']}")
        self.ok(ck, _short(st))

        ck = "delete.repeat"
        try:
            out, _ = self.c.request("DELETE", f"/sandbox/{gone_id}", check=ck)
            self.ok(ck, f"repeat DELETE answered 2xx {_short(out)}")
        except SDKError as exc:
            self.expect(exc.response.status == 404, ck,
                        f"{exc.response.describe()}: a repeated DELETE should succeed or be 404 (SDK retries "
                        f"DELETE after transport errors)")
            self.check_detail_error(ck, exc, 404)
            self.ok(ck, f"repeat DELETE -> {exc.message!r}")

        ck = "list.is_active"
        active = self.list(ck, labels=[self.label], exclude_terminated=True)
        everything = self.list(ck, labels=[self.label], exclude_terminated=False)
        a_ids = {s["id"] for s in active["sandboxes"]}
        e_ids = {s["id"] for s in everything["sandboxes"]}
        self.expect(gone_id not in a_ids, ck, f"is_active=true still lists the deleted {gone_id}")
        self.expect(gone_id in e_ids, ck, f"is_active=false (the CLI's --all) should not filter; {gone_id} missing")
        self.ok(ck, f"is_active=true hides, is_active=false keeps {gone_id}")

    def step_bulk_delete(self) -> None:
        ids = []
        # VMs, the SDK's two ways: vm unset (the default) and vm=True.
        for n, vm in (("a", None), ("b", True), ("c", None)):
            req = create_payload(f"sdkcompat-bulk-{n}-{self.tag}", "python:3.11-slim", vm=vm,
                                 labels=[self.label, "bulk"])
            sb = self.create(f"bulk-delete.create-{n}", req)
            ids.append(sb["id"])
        self.ok("bulk-delete.setup", f"created {ids}")

        ck = "bulk-delete.ids"
        ghost = f"c{uuid.uuid4().hex[:24]}"
        # bulk_delete(sandbox_ids=[...]): BulkDeleteSandboxRequest dumped with exclude_none.
        body = {"sandbox_ids": [ids[0], ghost], "all_users": False}
        out, _, _ = self.call(ck, "DELETE", "/sandbox", BulkDeleteSandboxResponseModel,
                              f"{SRC_MODELS} BulkDeleteSandboxResponse; {SRC_SANDBOX} bulk_delete()",
                              json_body=body)
        self.expect(ids[0] in out["succeeded"], ck, f"DELETE /sandbox {_short(body)}: {ids[0]} not in succeeded {out['succeeded']}")
        failed_ids = [f.get("sandbox_id") for f in out["failed"]]
        self.expect(ghost in failed_ids or ghost not in out["succeeded"], ck,
                    f"unknown id {ghost} reported as succeeded")
        self.ok(ck, f"succeeded={out['succeeded']} failed={out['failed']}")

        ck = "bulk-delete.labels"
        body = {"labels": [self.label, "bulk"], "all_users": False}
        out, _, _ = self.call(ck, "DELETE", "/sandbox", BulkDeleteSandboxResponseModel,
                              f"{SRC_MODELS} BulkDeleteSandboxResponse; {SRC_SANDBOX} bulk_delete()",
                              json_body=body)
        self.expect(set(ids[1:]) <= set(out["succeeded"]), ck,
                    f"DELETE /sandbox {_short(body)}: expected {ids[1:]} in succeeded, got {out['succeeded']}")
        self.expect(self.ctx["vm"]["id"] not in out["succeeded"], ck,
                    "a label delete removed the VM, which lacks the 'bulk' label (ALL-of)")
        self.ok(ck, f"succeeded={out['succeeded']}")

        ck = "bulk-delete.verify"
        st = self.statuses(ck, ids)
        bad = [s for s in st["statuses"] if s["status"] != "TERMINATED"]
        self.expect(not bad, ck, f"after bulk delete these are not TERMINATED: {_short(bad)}")
        self.ok(ck, "all three TERMINATED")

        ck = "bulk-delete.vm-cleanup"
        body = {"sandbox_ids": [self.ctx["vm"]["id"]], "all_users": False}
        out, _, _ = self.call(ck, "DELETE", "/sandbox", BulkDeleteSandboxResponseModel,
                              f"{SRC_MODELS} BulkDeleteSandboxResponse", json_body=body)
        self.expect(self.ctx["vm"]["id"] in out["succeeded"], ck, f"VM not deleted: {_short(out)}")
        self.ok(ck, "VM deleted")

    def step_create_rules(self) -> None:
        # Creates the 0.2.39 SDK builds and sends (its model lets them through)
        # and today's platform judges: whole vCPUs (the SDK's float 1.0/2.0 is
        # whole, 0.5 is not), a lifetime of 0 refused (negative is unlimited),
        # an idle timeout of 1-1,440 minutes.
        ck = "create.cpu-cores-whole-float"
        req = create_payload(f"sdkcompat-cpu2-{self.tag}", "ubuntu:22.04", vm=True, cpu_cores=2.0,
                             labels=[self.label, "rules"])
        self.expect(req["cpu_cores"] == 2.0 and isinstance(req["cpu_cores"], float), ck, "internal: cpu payload")
        sb = self.create(ck, req)
        self.check_echo(ck, sb, req)
        self.c.request("DELETE", f"/sandbox/{sb['id']}", check=ck)
        self.ok(ck, f"cpu_cores 2.0 accepted, cpuCores={sb['cpu_cores']!r}")

        for ck, kwargs, status, detail in (
            ("create.cpu-cores-fractional-refused", {"cpu_cores": 0.5}, 422, None),
            ("create.timeout-zero-refused", {"timeout_minutes": 0}, 422,
             "timeout_minutes must be negative for infinite or >= 1"),
            ("create.idle-timeout-over-1440-refused", {"timeout_minutes": -1, "idle_timeout_minutes": 1441}, 422, None),
        ):
            req = create_payload(f"sdkcompat-{ck.split('.')[1]}-{self.tag}", "ubuntu:22.04", vm=True,
                                 labels=[self.label, "rules"], **kwargs)
            err = self.create_refused(ck, req, status)
            if detail is not None:
                self.expect(err.message == f"HTTP {status}: {detail}", ck,
                            f"{err.response.describe()}: expected APIError('HTTP {status}: {detail}')")
            self.ok(ck, f"{err.kind}({err.message!r})")

        # arch is not a 0.2.39 field (the SDK cannot send it); the 2026 create
        # schema has it: amd64 (default) or arm64, anything else 422.
        ck = "create.arch"
        req = create_payload(f"sdkcompat-arm-{self.tag}", "ubuntu:22.04", vm=True, labels=[self.label, "rules"])
        sb = self.create(ck, {**req, "arch": "arm64"})
        self.check_echo(ck, sb, req)
        self.c.request("DELETE", f"/sandbox/{sb['id']}", check=ck)
        bad = create_payload(f"sdkcompat-riscv-{self.tag}", "ubuntu:22.04", vm=True, labels=[self.label, "rules"])
        err = self.create_refused(ck, {**bad, "arch": "riscv64"}, 422)
        self.ok(ck, f"arm64 accepted; riscv64 -> {err.kind}({err.message!r})")

    # -- driver --------------------------------------------------------------

    def run(self) -> int:
        print(f"# prime-sandboxes {SDK_VERSION} black-box check against {self.c.base_url} "
              f"(User-Agent {USER_AGENT}, run label {self.label})", flush=True)
        steps = [self.step_create, self.step_wait, self.step_list_get, self.step_egress,
                 self.step_logs_auth, self.step_files_jobs, self.step_errors, self.step_delete, self.step_bulk_delete,
                 self.step_create_rules]
        for step in steps:
            try:
                step()
            except Mismatch as exc:
                self.failures.append(exc)
                print(f"FAIL {exc.check}: {exc.message}", flush=True)
                if not self.args.keep_going:
                    break
            except KeyError as exc:  # a previous step failed to set up context
                if not self.args.keep_going:
                    raise
                print(f"SKIP {step.__name__}: needs {exc} from an earlier failed step", flush=True)
        print(f"# {self.passed} checks passed, {len(self.failures)} mismatch(es), "
              f"{self.c.requests} HTTP requests", flush=True)
        if self.failures:
            print("MISMATCH " + "; ".join(f.check for f in self.failures), flush=True)
            return 1
        return 0


# ---------------------------------------------------------------------------
# Offline self-test: the validators must accept what the SDK accepts and
# reject what it rejects (each case names the pydantic rule it mirrors).


def _good_sandbox(**over: Any) -> Dict[str, Any]:
    base = {
        "id": "sbx-1", "name": "t", "dockerImage": "img", "cpuCores": 1.0, "memoryGB": 2,
        "diskSizeGB": 10.0, "diskMountPath": "/sandbox-workspace", "gpuCount": 0, "vm": True,
        "status": "RUNNING", "timeoutMinutes": 60, "labels": ["a"],
        "createdAt": "2026-07-17T00:00:00Z", "updatedAt": "2026-07-17T00:00:00.123456+00:00",
    }
    base.update(over)
    return {k: v for k, v in base.items() if v is not MISSING}


def self_test() -> int:
    cases: List[Tuple[str, Callable[[], Any], bool]] = []

    def case(name: str, fn: Callable[[], Any], ok: bool) -> None:
        cases.append((name, fn, ok))

    S = SandboxModel.validate
    case("sandbox camelCase (SDK fixture)", lambda: S(_good_sandbox()), True)
    case("sandbox snake_case keys (populate_by_name)", lambda: S({
        "id": "s", "name": "n", "docker_image": "i", "cpu_cores": 1, "memory_gb": 1, "disk_size_gb": 1,
        "disk_mount_path": "/w", "gpu_count": 0, "status": "PENDING", "timeout_minutes": 60,
        "created_at": "2026-07-17T00:00:00Z", "updated_at": "2026-07-17T00:00:00Z"}), True)
    case("sandbox network_allowlist snake inside camelCase (SDK test)",
         lambda: S(_good_sandbox(network_allowlist=["api.example.com"], networkAccess=True)), True)
    case("sandbox vm absent defaults to false", lambda: S(_good_sandbox(vm=MISSING))["vm"] is False or 1/0, True)
    case("sandbox labels absent defaults to []", lambda: S(_good_sandbox(labels=MISSING)), True)
    case("sandbox labels null", lambda: S(_good_sandbox(labels=None)), False)
    case("sandbox vm null", lambda: S(_good_sandbox(vm=None)), False)
    case("sandbox vm as string", lambda: S(_good_sandbox(vm="true")), False)
    case("sandbox missing diskMountPath", lambda: S(_good_sandbox(diskMountPath=MISSING)), False)
    case("sandbox gpuCount float", lambda: S(_good_sandbox(gpuCount=1.5)), False)
    case("sandbox cpuCores string", lambda: S(_good_sandbox(cpuCores="1")), False)
    case("sandbox startCommand string", lambda: S(_good_sandbox(startCommand="tail -f /dev/null")), True)
    case("sandbox startCommand argv", lambda: S(_good_sandbox(startCommand={"executable": "/x", "args": []})), True)
    case("sandbox startCommand argv without args", lambda: S(_good_sandbox(startCommand={"executable": "/x"})), True)
    case("sandbox startCommand extra key (extra=forbid)",
         lambda: S(_good_sandbox(startCommand={"executable": "/x", "args": [], "shell": True})), False)
    case("sandbox startCommand empty executable (min_length=1)",
         lambda: S(_good_sandbox(startCommand={"executable": "", "args": []})), False)
    case("sandbox startCommand NUL", lambda: S(_good_sandbox(startCommand={"executable": "/x\x00"})), False)
    case("sandbox startCommand list", lambda: S(_good_sandbox(startCommand=["/x"])), False)
    case("sandbox createdAt 9 fraction digits (Go RFC3339Nano)",
         lambda: S(_good_sandbox(createdAt="2026-07-17T00:00:00.123456789Z")), False)
    case("sandbox createdAt 3 fraction digits", lambda: S(_good_sandbox(createdAt="2026-07-17T00:00:00.123Z")), True)
    case("sandbox createdAt garbage", lambda: S(_good_sandbox(createdAt="yesterday")), False)
    case("sandbox startedAt null", lambda: S(_good_sandbox(startedAt=None)), True)
    case("sandbox environmentVars list", lambda: S(_good_sandbox(environmentVars=["A=1"])), False)
    case("sandbox advancedConfigs free-form", lambda: S(_good_sandbox(advancedConfigs={"vmEgressPolicy": {"x": 1}})), True)

    L = SandboxListResponseModel.validate
    case("list camelCase envelope", lambda: L({"sandboxes": [], "total": 0, "page": 1, "perPage": 50, "hasNext": False}), True)
    case("list snake envelope", lambda: L({"sandboxes": [], "total": 0, "page": 1, "per_page": 50, "has_next": False}), True)
    case("list missing hasNext", lambda: L({"sandboxes": [], "total": 0, "page": 1, "perPage": 50}), False)
    case("list item labels null", lambda: L({"sandboxes": [_good_sandbox(labels=None)], "total": 1, "page": 1,
                                             "perPage": 50, "hasNext": False}), False)

    B = BatchSandboxStatusResponseModel.validate
    case("batch ok", lambda: B({"statuses": [{"sandbox_id": "a", "status": "PAUSED"}],
                                "errors": [{"sandbox_id": "b", "code": "MANAGED", "message": "m"}]}), True)
    case("batch status outside the enum", lambda: B({"statuses": [{"sandbox_id": "a", "status": "STOPPED"}], "errors": []}), False)
    case("batch lowercase status", lambda: B({"statuses": [{"sandbox_id": "a", "status": "running"}], "errors": []}), False)
    case("batch unknown error code", lambda: B({"statuses": [], "errors": [{"sandbox_id": "b", "code": "GONE", "message": "m"}]}), False)
    case("batch camelCase sandboxId", lambda: B({"statuses": [{"sandboxId": "a", "status": "RUNNING"}], "errors": []}), False)
    case("batch missing errors", lambda: B({"statuses": []}), False)

    E = EgressPolicyStatusModel.validate
    good_e = {"policy": {"allowlist": None, "denylist": []}, "generation": 0, "applied_generation": -1, "applied": False}
    case("egress fixture", lambda: E(good_e), True)
    case("egress policy keys absent (default null)", lambda: E({**good_e, "policy": {}}), True)
    case("egress camelCase appliedGeneration", lambda: E({"policy": {}, "generation": 0, "appliedGeneration": -1, "applied": False}), False)
    case("egress missing applied", lambda: E({k: v for k, v in good_e.items() if k != "applied"}), False)
    case("egress missing policy", lambda: E({k: v for k, v in good_e.items() if k != "policy"}), False)
    case("egress policy null", lambda: E({**good_e, "policy": None}), False)

    D = BulkDeleteSandboxResponseModel.validate
    case("bulk ok", lambda: D({"succeeded": ["a"], "failed": [{"sandbox_id": "b", "error": "x"}], "message": ""}), True)
    case("bulk failed value null", lambda: D({"succeeded": [], "failed": [{"sandbox_id": "b", "error": None}], "message": ""}), False)
    case("bulk missing message", lambda: D({"succeeded": [], "failed": []}), False)

    case("logs ok", lambda: SandboxLogsResponseModel.validate({"logs": ""}), True)
    case("logs null", lambda: SandboxLogsResponseModel.validate({"logs": None}), False)

    auth = {"gateway_url": "http://g", "token": "t", "user_ns": "u", "job_id": "j"}
    case("auth Z", lambda: validate_auth({**auth, "expires_at": "2026-08-20T12:00:00Z"}), True)
    case("auth offset + 6 digits", lambda: validate_auth({**auth, "expires_at": "2026-08-20T12:00:00.123456+00:00"}), True)
    case("auth naive", lambda: validate_auth({**auth, "expires_at": "2026-08-20T12:00:00"}), True)
    case("auth 9 digits (py3.10 fromisoformat)", lambda: validate_auth({**auth, "expires_at": "2026-08-20T12:00:00.123456789Z"}), False)
    case("auth 1 digit (py3.10 fromisoformat)", lambda: validate_auth({**auth, "expires_at": "2026-08-20T12:00:00.5Z"}), False)
    case("auth unix number", lambda: validate_auth({**auth, "expires_at": 1787400000}), False)
    case("auth missing job_id", lambda: validate_auth({k: v for k, v in auth.items() if k != "job_id"} | {"expires_at": "2026-08-20T12:00:00Z"}), False)

    case("payload default (vm unset keeps tail)", lambda: create_payload("n", "i")["start_command"] == DEFAULT_SHELL_COMMAND
         and "vm" not in create_payload("n", "i") or 1/0, True)
    case("payload vm=True drops tail", lambda: "start_command" not in create_payload("n", "i", vm=True) or 1/0, True)
    case("set_network allow * mapping", lambda: network_update_payload(allow=["*"]) == {"allowlist": None, "denylist": []} or 1/0, True)
    case("set_network deny * mapping", lambda: network_update_payload(deny=["*"]) == {"allowlist": [], "denylist": None} or 1/0, True)
    case("params repeat labels + bool", lambda: encode_params({"page": 1, "labels": ["a", "b"], "is_active": True})
         == "page=1&labels=a&labels=b&is_active=true" or 1/0, True)

    U = FileUploadResponseModel.validate
    case("upload ok", lambda: U({"success": True, "path": "/tmp/x", "size": 3, "timestamp": "2026-08-20T12:00:00Z"}), True)
    case("upload size string", lambda: U({"success": True, "path": "/tmp/x", "size": "3", "timestamp": "2026-08-20T12:00:00Z"}), False)
    case("upload no timestamp", lambda: U({"success": True, "path": "/tmp/x", "size": 3}), False)
    R = ReadFileResponseModel.validate
    case("read-file VM shape (SDK _legacy_whole_file)", lambda: R({"content": "x", "size": 1})["offset"] is None or 1/0, True)
    case("read-file window", lambda: R({"content": "x", "size": 1, "total_size": 9, "offset": 8, "truncated": True}), True)
    case("read-file content null", lambda: R({"content": None, "size": 0}), False)
    J = BatchBackgroundJobStatusResponseModel.validate
    case("job batch SDK fixture", lambda: J({"statuses": [{"sandbox_id": "a", "job_id": "feedface", "completed": True, "exit_code": 7},
                                                         {"sandbox_id": "b", "job_id": "deadbeef", "completed": False, "exit_code": None}],
                                            "errors": [{"sandbox_id": "c", "job_id": "cafebabe", "code": "RUNTIME_ERROR", "message": "m"}]}), True)
    case("job batch exit_code absent", lambda: J({"statuses": [{"sandbox_id": "a", "job_id": "x", "completed": False}], "errors": []}), True)
    case("job batch unknown code", lambda: J({"statuses": [], "errors": [{"sandbox_id": "a", "job_id": "x", "code": "GONE", "message": "m"}]}), False)
    case("job batch missing job_id", lambda: J({"statuses": [{"sandbox_id": "a", "completed": True}], "errors": []}), False)
    case("job command as the SDK builds it", lambda: background_job_command("0a1b2c3d", "echo hi", "/w", {"K": "a b"}) ==
         "nohup sh -c '(export K='\"'\"'a b'\"'\"'; cd /w && echo hi) > /tmp/job_0a1b2c3d.stdout.log "
         "2> /tmp/job_0a1b2c3d.stderr.log; echo $? > /tmp/job_0a1b2c3d.exit' < /dev/null > /dev/null 2>&1 &" or 1/0, True)
    case("multipart as httpx", lambda: httpx_multipart("file", "a.txt", b"x")[1].startswith("multipart/form-data; boundary=")
         and b'name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nx\r\n' in httpx_multipart("file", "a.txt", b"x")[0] or 1/0, True)

    bad = 0
    for name, fn, want_ok in cases:
        try:
            fn()
            got_ok, why = True, ""
        except (ModelError, ValueError, ZeroDivisionError) as exc:
            got_ok, why = False, str(exc)
        if got_ok == want_ok:
            print(f"PASS self-test: {name}" + (f" (rejected: {why})" if not got_ok else ""))
        else:
            bad += 1
            print(f"FAIL self-test: {name}: expected {'accept' if want_ok else 'reject'}, got "
                  f"{'accept' if got_ok else 'reject: ' + why}")
    print(f"# self-test: {len(cases) - bad}/{len(cases)} cases behave like the SDK")
    return 1 if bad else 0


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base-url", help="the mock's URL, e.g. http://127.0.0.1:8080")
    p.add_argument("--self-test", action="store_true", help="only check the validators offline")
    p.add_argument("--api-key", default="sdkcompat-key", help="bearer key (default: %(default)s)")
    p.add_argument("--keep-going", action="store_true", help="continue with the next step after a mismatch")
    p.add_argument("--wait-timeout", type=float, default=20.0, help="seconds to wait for RUNNING")
    p.add_argument("--apply-timeout", type=float, default=15.0, help="seconds to wait for an egress policy to apply")
    args = p.parse_args(argv)
    if args.self_test:
        return self_test()
    if not args.base_url:
        p.error("--base-url is required (or --self-test)")
    try:
        return Run(args).run()
    except Unreachable as exc:
        print(f"ERROR cannot reach the mock: {exc}", flush=True)
        return 2


if __name__ == "__main__":
    sys.exit(main())
