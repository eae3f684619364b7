"""Facts about the machine a campaign ran on (CPU, cores, memory, kernel, distribution, load)."""

from __future__ import annotations

import os
import platform


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def cpu_model() -> str:
    for line in _read("/proc/cpuinfo").splitlines():
        if line.lower().startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def memory_gib() -> float | None:
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            return round(int(line.split()[1]) / 1024 / 1024, 1)
    return None


def distro() -> str:
    for line in _read("/etc/os-release").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip().strip('"')
    return "unknown"


def free_page_reporting() -> dict | None:
    """The guest kernel's free page reporting (virtio-balloon), when it has it: pages the
    kernel frees go back to the hypervisor, so the next touch of them costs a host fault. It
    makes writes into fresh page-cache pages (a growing store) several times dearer than into
    pages in use, which VOLATILE runs never touch; recorded so a reader can tell such machines."""
    base = "/sys/module/page_reporting/parameters"
    if not os.path.isdir(base):
        return None
    facts = {}
    for name in ("page_reporting_order", "min_free_ms", "reported_kib"):
        value = _read(os.path.join(base, name)).strip()
        if value:
            facts[name] = int(value) if value.isdigit() else value
    return facts or None


def machine_facts() -> dict:
    """CPU model, logical cores, memory, kernel, distribution, hostname, load average."""
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = []
    return {
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": memory_gib(),
        "kernel": platform.release(),
        "distro": distro(),
        "arch": platform.machine(),
        "hostname": platform.node(),
        "loadavg_at_start": load,
        "free_page_reporting": free_page_reporting(),
    }
