"""The playground in a real browser: Debian's headless chromium driven by Selenium.

scripts/bootstrap.sh installs `chromium` and `chromium-driver` when missing.
The test also takes the screenshot docs/authoring.md shows; it refreshes
docs/img/playground.png only with POLICYC_UPDATE_SCREENSHOT=1, so a test run
never changes a tracked file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
SCREENSHOT = REPO / "docs" / "img" / "playground.png"
UPDATE_SCREENSHOT = os.environ.get("POLICYC_UPDATE_SCREENSHOT") == "1"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,760",
)

BROKEN = """\
validator guard {
  on tools/call request
  deny tools ["shell_exec"] "tool is blocked" code blocked-tool
}
mutator scrub {
  on tools/call request
  redact $.arguments matching EMAL
}
"""
FIXED = BROKEN.replace("EMAL", "EMAIL")


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WebDriver]:
    # Selenium must use the Debian driver and browser, never fetch its own.
    monkeypatch.setenv("SE_OFFLINE", "true")
    options = Options()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def wait(driver: WebDriver, condition: Callable[[WebDriver], Any], what: str) -> Any:
    return WebDriverWait(driver, 20, poll_frequency=0.1).until(condition, f"timed out: {what}")


def runs(driver: WebDriver) -> int:
    return int(driver.find_element(By.TAG_NAME, "body").get_attribute("data-runs") or 0)


def settle(driver: WebDriver, after: int) -> None:
    """Wait until the page has re-run since ``after`` (debounced input, then /api/run)."""
    wait(driver, lambda d: runs(d) > after, "the page to re-run")


def type_into(driver: WebDriver, element_id: str, text: str) -> None:
    element = driver.find_element(By.ID, element_id)
    element.click()
    element.send_keys(Keys.CONTROL, "a")
    element.send_keys(Keys.DELETE)
    element.send_keys(text)


def set_payload(driver: WebDriver, payload: Any) -> None:
    before = runs(driver)
    type_into(driver, "payload", json.dumps(payload, indent=2))
    settle(driver, before)


def caret_line(driver: WebDriver) -> int:
    return int(
        driver.execute_script(
            "const a = document.getElementById('policy');"
            "return a.value.slice(0, a.selectionStart).split('\\n').length;"
        )
    )


def test_edit_check_evaluate_and_share(
    browser: WebDriver, playground_url: str, tmp_path: Path
) -> None:
    browser.get(playground_url + "/")
    wait(browser, lambda d: runs(d) >= 1, "the first run")
    assert "tool-guard" in browser.find_element(By.ID, "policy").get_attribute("value")
    assert browser.find_element(By.ID, "decision").text == "BLOCKED"

    # A policy with an error: the diagnostic sits on line 7, under the typo.
    before = runs(browser)
    type_into(browser, "policy", BROKEN)
    settle(browser, before)
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".diag[data-code='E103']"), "E103")
    mark = browser.find_element(By.CSS_SELECTOR, ".diag[data-code='E103']")
    assert (mark.get_attribute("data-line"), mark.get_attribute("data-column")) == ("7", "31")
    assert mark.text == "EMAL"
    gutter = browser.find_element(By.CSS_SELECTOR, ".gutter .ln[data-line='7']")
    assert "error" in (gutter.get_attribute("class") or "")
    item = browser.find_element(By.CSS_SELECTOR, "#diagnostics li.error")
    assert "example.policy:7:31: error[E103]: unknown pattern `EMAL`" in item.text
    assert "help: did you mean `EMAIL`?" in item.text
    assert browser.find_element(By.ID, "decision").text == "NOT EVALUATED"

    # Fixed: no diagnostics, and a blocked call.
    before = runs(browser)
    type_into(browser, "policy", FIXED)
    settle(browser, before)
    assert not browser.find_elements(By.CSS_SELECTOR, ".diag")
    assert browser.find_element(By.CSS_SELECTOR, "#diagnostics li").text == "no problems"
    set_payload(browser, {"name": "shell_exec", "arguments": {"cmd": "ls"}})
    assert browser.find_element(By.ID, "decision").text == "BLOCKED"
    assert "tool is blocked" in browser.find_element(By.ID, "decision-detail").text
    fired = browser.find_element(By.CSS_SELECTOR, "#trace li.fired")
    assert "blocked-tool" in fired.text
    link = fired.find_element(By.CSS_SELECTOR, "a.rule-link")
    assert link.text == "example.policy:3"
    link.click()
    assert caret_line(browser) == 3

    # A redacted call: the final payload marks the rewritten value.
    set_payload(browser, {"name": "search", "arguments": {"q": "mail ann@example.com"}})
    assert browser.find_element(By.ID, "decision").text == "MODIFIED"
    changed = browser.find_element(By.CSS_SELECTOR, "#final mark")
    assert changed.text == '"mail [REDACTED:EMAIL]"'
    assert "tools/call request (sending): success" in browser.find_element(By.ID, "explain").text

    # The share link carries the whole state to a new page, with no server state.
    browser.find_element(By.ID, "share").click()
    shared = browser.find_element(By.ID, "share-link").get_attribute("value") or ""
    assert shared.startswith(playground_url + "/#s=")
    shot = SCREENSHOT if UPDATE_SCREENSHOT else tmp_path / "playground.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000  # a rendered page, not an empty frame

    browser.switch_to.new_window("window")
    browser.get(shared)
    wait(browser, lambda d: runs(d) >= 1, "the shared page's first run")
    assert browser.find_element(By.ID, "policy").get_attribute("value") == FIXED
    payload = json.loads(browser.find_element(By.ID, "payload").get_attribute("value") or "")
    assert payload == {"name": "search", "arguments": {"q": "mail ann@example.com"}}
    assert browser.find_element(By.ID, "event").get_attribute("value") == "tools/call"
    assert browser.find_element(By.ID, "phase").get_attribute("value") == "request"
    assert browser.find_element(By.ID, "decision").text == "MODIFIED"
    assert browser.find_element(By.CSS_SELECTOR, "#final mark").text == '"mail [REDACTED:EMAIL]"'
    # No script error and no content-security-policy violation on either page.
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
