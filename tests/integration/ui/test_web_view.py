"""The web view in a real browser (root): Debian's Chromium, headless, driven by Selenium, against ``srfabric
serve`` on the line fabric in Mininet (h1 - s1 - s2 - s3 - h2, functions v1 and v2 on s2, known to the
controller once a port pair names them). The page loads
with the token, draws every switch and link, shows a chain made through the REST API without a reload, turns
a cut link "down", lists the chain's functions in order, and draws a stream's gate control lists; the browser
logs no error. Screenshots go to
``results/ui/`` (test artefacts; the documentation's are committed under ``docs/ui/``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess, line_spec
from tests.integration.api.test_dataplane import chain

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces and switches"),
              pytest.mark.skipif(shutil.which("chromedriver") is None, reason="chromium-driver not installed")]

ARTEFACTS = Path("results/ui")


@pytest.fixture
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    profile = tempfile.mkdtemp(prefix="srfabric-chromium-")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1500,900", "--no-first-run", "--disable-background-networking",
                 f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver")))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def lab() -> Iterator[ApiLab]:
    folder = Path(tempfile.mkdtemp(prefix="srfabric-db-"))
    try:
        with ServeProcess(f"sqlite:///{folder}/ui.db") as serve, ApiLab(line_spec(2), serve) as running:
            yield running
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def wait(driver: Any, condition: Callable[[Any], Any], what: str, timeout: float = 15) -> Any:
    """``condition``'s first true answer; on a timeout the page, a screenshot and the browser's log are kept
    in the artefacts and the log is in the failure."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(driver, timeout).until(condition, message=what)
    except TimeoutException:
        driver.save_screenshot(str(ARTEFACTS / "failed.png"))
        (ARTEFACTS / "failed.html").write_text(driver.page_source)
        raise AssertionError(f"{what}: not within {timeout} s; browser log: {driver.get_log('browser')}") from None


def test_the_web_view_shows_the_fabric_and_follows_it(browser: Any, lab: ApiLab) -> None:
    from selenium.webdriver.common.by import By

    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    serve = lab.serve
    browser.get(f"{serve.url}/ui/?token={serve.token}")
    css = By.CSS_SELECTOR
    wait(browser, lambda d: len(d.find_elements(css, "g.switch")) == 3 and len(d.find_elements(css, "line.link")) == 2
         and len(d.find_elements(css, "g.host")) == 2, "the topology drawn")
    assert "token" not in browser.current_url  # it became a cookie
    assert {g.get_attribute("data-dpid") for g in browser.find_elements(css, "g.switch")} == {
        str(lab.spec.dpid(name)) for name in lab.spec.switches}
    wait(browser, lambda d: d.find_element(css, "#status").text == "live", "the event stream open")
    browser.save_screenshot(str(ARTEFACTS / "topology.png"))

    with serve.client() as client:  # made through the REST API: the page shows it without a reload
        chain(client, lab, [[("v1", 1)], [("v2", 1)]], {"protocol": "udp", "destination_port_range_min": 5001,
                                                         "destination_port_range_max": 5001})
    item = wait(browser, lambda d: d.find_elements(css, "#chains li"), "the chain listed")[0]
    assert len(browser.find_elements(css, "g.function")) == 2  # its port pairs made v1 and v2 known
    item.click()
    functions = wait(browser, lambda d: d.find_elements(css, "#detail ol.functions li"), "the chain's functions")
    assert [li.text for li in functions] == ["v1", "v2"]
    assert browser.find_elements(css, "polyline.chain-path")
    assert browser.find_elements(css, "#detail td code")  # the header each pathlet writes
    browser.save_screenshot(str(ARTEFACTS / "chain.png"))

    link = lab.spec.links[0]
    port = f"{link.a}-eth{link.a_port}"
    subprocess.run(["ip", "link", "set", port, "down"], check=True)
    try:
        wait(browser, lambda d: d.find_elements(css, 'line.link[data-state="down"]'), "the cut link down")
        browser.save_screenshot(str(ARTEFACTS / "link-down.png"))
    finally:
        subprocess.run(["ip", "link", "set", port, "up"], check=True)
    wait(browser, lambda d: not d.find_elements(css, 'line.link[data-state="down"]'), "the link back up", 30)

    with serve.client() as client:  # a time-sensitive stream: its slot and every gated port's gate list
        client.create("streams", {"name": "cam", "talker": lab.ports["h1"], "listener": lab.ports["h2"],
                                  "period_ns": 1_000_000, "size_bytes": 200, "udp_destination_port": 5002})
    wait(browser, lambda d: d.find_elements(css, "#streams tr[data-stream]") and d.find_elements(css, "#gates rect.tt"),
         "the stream and its gates")
    browser.find_element(css, "#streams tr[data-stream]").click()  # its path drawn on the fabric
    wait(browser, lambda d: d.find_elements(css, "polyline.stream-path"), "the stream's path")
    points = browser.find_element(css, "polyline.stream-path").get_attribute("points").split()
    assert len(points) == 5  # h1, s1, s2, s3, h2
    browser.save_screenshot(str(ARTEFACTS / "streams.png"))

    with serve.client() as client:  # a class A stream: its bound, and what each port on its path reserves
        client.create("streams", {"name": "audio", "talker": lab.ports["h1"], "listener": lab.ports["h2"],
                                  "period_ns": 125_000, "size_bytes": 200, "udp_destination_port": 5003,
                                  "priority": 3, "max_latency_ns": 5_000_000})
    wait(browser, lambda d: len(d.find_elements(css, "#classes tr[data-port]")) == 4, "the class's reserved slopes")
    assert "15.488" in browser.find_element(css, "#classes").text  # 242 bytes on the wire every 125 us

    browser.find_element(css, "g.switch").click()  # a switch's entries and counters
    wait(browser, lambda d: "forged headers dropped" in d.find_element(css, "#detail-body").text, "a switch's view")
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []
