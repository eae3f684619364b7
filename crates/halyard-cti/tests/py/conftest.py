"""Fixtures of the halyard-cti Python tests.

Nothing here builds: the node binary comes from $HALYARD_CTI_BIN (default
<repo>/target/ci/halyard-cti, else <repo>/target/debug/halyard-cti); a test needing it fails
with the paths looked at when it is absent.

- `cti_bin`: the binary's path.
- `start_node(org, domain, sectors, extra="")`: writes a node.toml (no DDS Security, a free
  HTTP port, review only for TLP:RED; `extra` is appended: [limits], [[poll]] ...) in a fresh
  directory, creates the `admin` account with `halyard-cti user add` BEFORE `serve`, starts
  it and returns a `ctitest.Node` (`.base` URL, `.admin` credential, `.add_user`, `.token`,
  `.stop`/`.start` for restarts). Function scope; `start_module_node` is the same for a whole
  module.
- `start_medallion(collections, max_page_size=100)`: medallion (the OASIS TAXII 2.1 reference
  server, memory backend) on a free port with a temporary configuration; `start_module_medallion`
  for a whole module.

Every process is killed at teardown; when a test fails its report gets each live process's log
(node stderr and stdout, medallion's log).
"""

import pytest

import ctitest


def _require_bin():
    try:
        return ctitest.cti_bin()
    except FileNotFoundError as e:
        message = str(e)
    pytest.fail(message, pytrace=False)


@pytest.fixture(scope="session")
def cti_bin():
    return _require_bin()


def _factory(tmp_dir, started):
    def start_node(org, domain, sectors, extra="", start=True):
        _require_bin()  # fails clearly before anything else when absent
        n = ctitest.Node(tmp_dir / org, org, ctitest.node_config(org, domain, sectors, extra))
        started.append(n)
        ctitest.LIVE.append(n)
        if start:
            n.start()
        return n

    return start_node


def _medallion_factory(tmp_dir, started):
    def start_medallion(collections, max_page_size=100, name="medallion"):
        m = ctitest.Medallion(tmp_dir / name, collections, max_page_size)
        started.append(m)
        ctitest.LIVE.append(m)
        return m.start()

    return start_medallion


def _teardown(started):
    for p in started:
        p.kill()
        if p in ctitest.LIVE:
            ctitest.LIVE.remove(p)


@pytest.fixture
def start_node(cti_bin, tmp_path):
    started = []
    yield _factory(tmp_path, started)
    _teardown(started)


@pytest.fixture(scope="module")
def start_module_node(tmp_path_factory):
    started = []
    _require_bin()
    yield _factory(tmp_path_factory.mktemp("nodes"), started)
    _teardown(started)


@pytest.fixture
def start_medallion(tmp_path):
    started = []
    yield _medallion_factory(tmp_path, started)
    _teardown(started)


@pytest.fixture(scope="module")
def start_module_medallion(tmp_path_factory):
    started = []
    yield _medallion_factory(tmp_path_factory.mktemp("medallion"), started)
    _teardown(started)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for p in list(ctitest.LIVE):
            report.sections.append((f"log of {p.name} ({p.log_path})", p.log_tail()))
