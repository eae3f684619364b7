"""The web dashboard in a real browser: Debian's chromium, driven by chromedriver through
selenium, against two nodes on DDS domain 217.

acme is in the energy and finance sectors, borealis in finance; acme's sanitiser queues what
it changes. What a user relies on: logging in; intelligence published on one node appearing
in the other node's feed without a reload within a second; a queued object approved by a
second reviewer (never its submitter, never an analyst) and then reaching the other node;
search finding it; the relationship graph, community status and plots drawn; a form posted
by another site refused; a `<script>` in STIX shown as text.

With HALYARD_SCREENSHOTS=DIR the pages are saved there as PNG (the guide's screenshots are
taken so: HALYARD_SCREENSHOTS=docs/guide/img).
"""

import http.server
import json
import os
import shutil
import threading
import time
from pathlib import Path

import pytest
import requests

import ctitest
from ctitest import PASSWORD, TLP_GREEN, indicator, malware, relationship, wait_until

DOMAIN = 217

selenium = pytest.importorskip("selenium", reason="selenium is installed by scripts/install-deps.sh")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

SHOTS = os.environ.get("HALYARD_SCREENSHOTS")


def chromium_paths():
    browser = shutil.which("chromium") or "/usr/bin/chromium"
    driver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    for p in (browser, driver):
        if not Path(p).exists():
            pytest.fail(f"{p} is missing: scripts/install-deps.sh installs Debian's chromium "
                        "and chromium-driver", pytrace=False)
    return browser, driver


@pytest.fixture(scope="module")
def browser_factory():
    browser, driver = chromium_paths()
    made = []

    def make():
        o = webdriver.ChromeOptions()
        o.binary_location = browser
        for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                  "--window-size=1400,1000", "--disable-gpu"):
            o.add_argument(a)
        o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        d = webdriver.Chrome(service=Service(driver), options=o)
        d.set_page_load_timeout(30)
        made.append(d)
        return d

    yield make
    for d in made:
        d.quit()


def config(org, sectors):
    # acme's sanitiser queues what it changes; nothing else is queued.
    text = ctitest.node_config(org, DOMAIN, sectors)
    return (text.replace("on_sanitized = false", "on_sanitized = true")
            + '\n[sanitize]\ninternal_domains = ["acme.example"]\n'
            'internal_networks = ["10.0.0.0/8"]\n')


@pytest.fixture(scope="module")
def community(start_module_node):
    acme = start_module_node("acme", DOMAIN, ["energy", "finance"], start=False)
    acme.config.write_text(config("acme", ["energy", "finance"]))
    borealis = start_module_node("borealis", DOMAIN, ["finance"], start=False)
    for who, role in (("rita", "reviewer"), ("rob", "reviewer"), ("ana", "analyst"),
                      ("alex", "analyst")):
        acme.add_user(who, role)
    borealis.add_user("rob", "reviewer")
    acme.start()
    borealis.start()
    return acme, borealis


def login(d, node, name, password=PASSWORD, path="/ui/"):
    d.get(node.base + path)
    WebDriverWait(d, 10).until(lambda d: d.find_elements(By.ID, "password"))
    d.find_element(By.ID, "name").send_keys(name)
    d.find_element(By.ID, "password").send_keys(password)
    d.find_element(By.ID, "login").click()
    WebDriverWait(d, 10).until(lambda d: d.find_elements(By.ID, "me"))
    assert d.find_element(By.ID, "me").text.startswith(name)


def shot(d, name):
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        d.save_screenshot(str(Path(SHOTS) / f"dashboard-{name}.png"))


def csp_violations(d):
    return [e["message"] for e in d.get_log("browser")
            if "Content Security Policy" in e["message"]]


def text_of(d, element_id):
    return d.find_element(By.ID, element_id).text


def test_a_wrong_password_is_refused_and_a_session_ends_at_logout(community, browser_factory):
    acme, _ = community
    d = browser_factory()
    d.get(acme.base + "/ui/review")
    assert "/ui/login" in d.current_url, "a page without a session goes to the login form"
    d.find_element(By.ID, "name").send_keys("rita")
    d.find_element(By.ID, "password").send_keys("not the password")
    d.find_element(By.ID, "login").click()
    WebDriverWait(d, 10).until(lambda d: d.find_elements(By.ID, "login-error"))
    assert "not accepted" in text_of(d, "login-error")
    login(d, acme, "rita", path="/ui/review")
    assert d.current_url.endswith("/ui/review"), "login comes back to the page asked for"
    d.find_element(By.CSS_SELECTOR, "form.logout button").click()
    WebDriverWait(d, 10).until(lambda d: d.find_elements(By.ID, "password"))
    d.get(acme.base + "/ui/")
    assert "/ui/login" in d.current_url, "the session ended at logout"


def test_an_indicator_published_on_another_node_appears_in_the_feed_within_a_second(
        community, browser_factory):
    acme, borealis = community
    d = browser_factory()
    login(d, borealis, "rob")
    WebDriverWait(d, 10).until(lambda d: text_of(d, "live-state") == "live")
    ind = indicator(1, name="Feed check C2 198.51.100.7",
                    pattern="[ipv4-addr:value = '198.51.100.7']")
    # Published on acme through its REST API, shared in finance.
    acme.post_bundle([ind], sector="finance")
    published = time.monotonic()
    link = f"a[href='/ui/objects/{ind['id']}']"
    WebDriverWait(d, 1.0, poll_frequency=0.02).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#feed-rows " + link))
    took = time.monotonic() - published
    print(f"feed: on the other node's page {took * 1000:.0f} ms after the publish returned")
    row = d.find_element(By.CSS_SELECTOR, "#feed-rows tr:first-child").text
    assert "acme" in row and "finance" in row and "TLP:GREEN" in row, row
    assert d.execute_script("return performance.getEntriesByType('navigation').length") == 1
    shot(d, "feed")
    assert csp_violations(d) == []


def queued_item(acme, submitter, name):
    """Posts, as `submitter`, a TLP:GREEN indicator whose description carries an internal
    e-mail address and host address; acme's sanitiser generalises them and queues it. Returns the
    object and its review item's number."""
    ind = indicator(2, name=name, pattern="[domain-name:value = 'update-check.example']",
                    description="Reported by jane.doe@acme.example from 10.20.30.40")
    report = acme.post_bundle([ind], sector="finance", auth=(submitter, PASSWORD))
    r = requests.get(acme.base + "/api/v1/review", auth=acme.admin, timeout=30)
    items = [i for i in r.json()["items"] if i["object_id"] == ind["id"]]
    assert items, f"not queued: {report}"
    return ind, items[0]["id"]


def test_a_queued_object_is_approved_by_a_second_reviewer_then_reaches_the_other_node(
        community, browser_factory):
    acme, borealis = community
    ind, n = queued_item(acme, "rita", "Queued lure domain update-check")
    d = browser_factory()
    # The submitter sees the item and the sanitiser's diff, but cannot decide it.
    login(d, acme, "rita")
    d.get(f"{acme.base}/ui/review/{n}")
    diff = text_of(d, "diff")
    assert "- " in diff and "jane.doe@acme.example" in diff, diff
    assert d.find_elements(By.ID, "four-eyes") and not d.find_elements(By.ID, "approve")
    # Not even by posting the form by hand with her own session's token.
    status = post_from_page(d, f"/ui/review/{n}", "action=approve")
    assert status == 403, status
    assert review_state(acme, n) == "pending"
    d.delete_all_cookies()
    # A second reviewer approves it.
    login(d, acme, "rob", path=f"/ui/review/{n}")
    shot(d, "review")
    d.find_element(By.ID, "note").send_keys("checked: contact details removed")
    d.find_element(By.ID, "approve").click()
    WebDriverWait(d, 10).until(lambda d: text_of(d, "review-state") == "approved")
    assert "rob" in text_of(d, "decision")
    # It reaches borealis (finance), sanitised.
    def received():
        r = borealis.get(f"/api/v1/objects/{ind['id']}")
        return r.status_code == 200 and r.json()["versions"]
    versions = wait_until("the approved object on borealis", received, 15, procs=(acme, borealis))
    shared = versions[-1]["object"]
    assert "jane.doe" not in json.dumps(shared) and "10.20.30.40" not in json.dumps(shared)
    # The audit log shows the decision.
    d.get(acme.base + "/ui/audit")
    assert "rob" in text_of(d, "audit") and "approve" in text_of(d, "audit")
    # Search on borealis finds it.
    login(d, borealis, "rob", path="/ui/search")
    d.find_element(By.ID, "q").send_keys("update-check")
    d.find_element(By.ID, "search").click()
    WebDriverWait(d, 10).until(lambda d: d.find_elements(By.ID, "result-count"))
    assert d.find_elements(By.CSS_SELECTOR, f"#results a[href='/ui/objects/{ind['id']}']")
    # A search of another marking does not.
    d.get(borealis.base + "/ui/search?q=update-check&tlp=red")
    assert not d.find_elements(By.CSS_SELECTOR, f"#results a[href='/ui/objects/{ind['id']}']")


def review_state(node, n):
    r = requests.get(f"{node.base}/api/v1/review/{n}", auth=node.admin, timeout=30)
    return r.json()["state"]


def post_from_page(d, path, body, with_token=True):
    """POSTs a form body from the current page's script, with the session's CSRF token (the
    same request the page's own form makes); the response status."""
    return d.execute_async_script(
        "const path = arguments[0], body = arguments[1], withToken = arguments[2],"
        " done = arguments[3];"
        "const token = document.querySelector('meta[name=csrf-token]').content;"
        "fetch(path, {method: 'POST', credentials: 'same-origin', redirect: 'manual',"
        " headers: {'Content-Type': 'application/x-www-form-urlencoded'},"
        " body: body + (withToken ? '&csrf=' + encodeURIComponent(token) : '')})"
        ".then(r => done(r.status), e => done(String(e)));",
        path, body, with_token)


def test_an_analyst_cannot_approve(community, browser_factory):
    acme, _ = community
    _, n = queued_item(acme, "ana", "Analyst-submitted lure domain")
    d = browser_factory()
    login(d, acme, "alex")
    assert not d.find_elements(By.LINK_TEXT, "Review"), "no review queue for an analyst"
    d.get(f"{acme.base}/ui/review/{n}")
    assert "403" in d.title or "reviewer" in d.find_element(By.TAG_NAME, "body").text
    d.get(acme.base + "/ui/")
    assert post_from_page(d, f"/ui/review/{n}", "action=approve") == 403
    assert review_state(acme, n) == "pending"


class CrossSite:
    """A page on another port of this host (another origin) that posts forms to a node."""

    def __init__(self, html):
        body = html.encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"

    def close(self):
        self.server.shutdown()


def test_a_cross_site_form_post_is_refused(community, browser_factory):
    acme, _ = community
    _, n = queued_item(acme, "ana", "Cross-site target lure")
    d = browser_factory()
    login(d, acme, "rob")
    # The attacker's page: an auto-submitted approval, without the session's token. The
    # browser sends the session cookie (another port of the same host is the same site).
    site = CrossSite(
        f"""<html><body><form id="f" method="post" action="{acme.base}/ui/review/{n}">
        <input type="hidden" name="action" value="approve"></form>
        <script>document.getElementById('f').submit()</script></body></html>""")
    try:
        d.get(site.url)
        WebDriverWait(d, 10).until(lambda d: d.current_url.startswith(acme.base))
        body = d.find_element(By.TAG_NAME, "body").text
        assert "403" in d.title, (d.title, body)
        assert "another site" in body or "CSRF" in body, body
        # Nor through the REST API with the cookie alone (a text/plain form post).
        api = CrossSite(
            f"""<html><body><form id="f" method="post" enctype="text/plain"
            action="{acme.base}/api/v1/review/{n}/approve"><input type="hidden" name="a" value="b">
            </form><script>document.getElementById('f').submit()</script></body></html>""")
        try:
            d.get(api.url)
            WebDriverWait(d, 10).until(lambda d: d.current_url.startswith(acme.base))
            assert "X-CSRF-Token" in d.find_element(By.TAG_NAME, "body").text
        finally:
            api.close()
    finally:
        site.close()
    assert review_state(acme, n) == "pending", "nothing was approved"


def test_a_script_in_stix_shows_as_text(community, browser_factory):
    acme, borealis = community
    evil = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"
    ind = indicator(3, name=evil, description=evil,
                    pattern="[ipv4-addr:value = '203.0.113.66']")
    acme.post_bundle([ind], sector="energy")
    d = browser_factory()
    login(d, acme, "ana")
    for path in ("/ui/", f"/ui/objects/{ind['id']}", "/ui/search?q=pwned"):
        d.get(acme.base + path)
        assert d.title != "pwned", path
        assert d.find_elements(By.XPATH, "//*[contains(text(), \"<script>document.title\")]"), path
    assert text_of(d, "results").count("<script>") >= 1
    # And live: the feed row written by the page's script is text too.
    d.get(acme.base + "/ui/")
    WebDriverWait(d, 10).until(lambda d: text_of(d, "live-state") == "live")
    second = indicator(4, name=evil + " live", pattern="[ipv4-addr:value = '203.0.113.67']")
    acme.post_bundle([second], sector="energy")
    WebDriverWait(d, 5).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, f"#feed-rows a[href='/ui/objects/{second['id']}']"))
    assert d.title != "pwned"
    assert "<script>" in d.find_element(By.CSS_SELECTOR, "#feed-rows tr:first-child").text


def test_graph_community_and_plots_are_drawn(community, browser_factory):
    acme, borealis = community
    mal = malware("GraphMoth")
    inds = [indicator(10 + i, name=f"GraphMoth C2 {i}",
                      pattern=f"[ipv4-addr:value = '192.0.2.{i + 1}']") for i in range(3)]
    rels = [relationship(i, "indicates", mal) for i in inds]
    acme.post_bundle([mal, *inds, *rels], sector="finance")
    wait_until("the graph's objects on borealis",
               lambda: borealis.get(f"/api/v1/objects/{rels[-1]['id']}").status_code == 200,
               15, procs=(acme, borealis))
    d = browser_factory()
    login(d, borealis, "rob", path="/ui/plots")
    WebDriverWait(d, 10).until(lambda d: text_of(d, "live-state") == "live")
    # Objects arriving while the plots page is open are plotted.
    more = [indicator(20 + i, name=f"Plotted {i}", pattern=f"[ipv4-addr:value = '192.0.2.{50 + i}']")
            for i in range(10)]
    for o in more:
        acme.post_bundle([o], sector="finance")
        time.sleep(0.2)
    time.sleep(2.5)
    assert len(d.find_elements(By.CSS_SELECTOR, "#plots canvas")) == 3
    plotted = int(d.find_element(By.ID, "plots").get_attribute("data-events") or 0)
    assert plotted >= len(more), plotted
    shot(d, "plots")
    d.get(f"{borealis.base}/ui/objects/{mal['id']}")
    WebDriverWait(d, 10).until(
        lambda d: d.find_element(By.ID, "graph").get_attribute("data-drawn") == "4")
    shot(d, "graph")
    d.get(borealis.base + "/ui/community")
    WebDriverWait(d, 10).until(lambda d: "acme" in text_of(d, "member-rows"))
    rows = text_of(d, "member-rows")
    assert "finance" in rows and "alive" in rows, rows
    shot(d, "community")
    assert csp_violations(d) == []
