"""The built site, read by a real browser: Debian's headless Chromium, driven
by selenium through Debian's chromedriver.

Run after the build, from the checkout::

    make -C docs html && pytest docs/test_site.py

The site in ``docs/_build/html`` is served on 127.0.0.1; for the front page,
a user-guide page, an API page and two gallery pages, the tests check that
the page loads with no error in the browser's console, that every link into
the site resolves (the file, and the element a ``#fragment`` names), and, on
the gallery pages, that every figure is an image the browser loaded. The
search box is used as a reader would use it, and must find MultinomialNB.
A screenshot of each page is kept in ``docs/_build/screenshots/`` (CI keeps
the build folder). Without Chromium and chromedriver
(``apt-get install chromium chromium-driver``) the tests fail, saying so.
"""

import functools
import http.server
import re
import shutil
import threading
import urllib.error
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest

BUILD = Path(__file__).parent / "_build"
SITE = BUILD / "html"
SCREENSHOTS = BUILD / "screenshots"

# name: the page's path in the site.
PAGES = {
    "front": "index.html",
    "user-guide": "user_guide/smoothing.html",
    "api": "api/generated/fastnb.MultinomialNB.html",
    "gallery-spam-ham": "auto_examples/textbook/plot_spam_ham.html",
    "gallery-kde": "auto_examples/larger_data/plot_kde_vs_gaussian.html",
}
GALLERY_PAGES = [name for name in PAGES if name.startswith("gallery")]
# How long the browser waits for a page's scripts (search results, figures).
WAIT_S = 20


@pytest.fixture(scope="module")
def site_url():
    """The built site, served on 127.0.0.1 from a thread, for this module."""
    if not (SITE / "index.html").exists():
        pytest.fail(f"no site in {SITE}: build it first (make -C docs html)")
    handler = functools.partial(QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site without a log line a request."""

    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium, its console's messages kept for get_log."""
    webdriver = pytest.importorskip("selenium.webdriver")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        pytest.fail(
            "the site's browser tests need Chromium and chromedriver "
            "(Debian: apt-get install chromium chromium-driver)"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1280,1000",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(
        options=options, service=webdriver.ChromeService(executable_path=driver_path)
    )
    driver.set_page_load_timeout(WAIT_S)
    yield driver
    driver.quit()


def open_page(browser, site_url, path):
    """Load ``path`` and wait until the document and its images are loaded;
    the console's messages of earlier pages are read off and dropped."""
    browser.get_log("browser")
    browser.get(urllib.parse.urljoin(site_url, path))
    wait_for(browser, "return document.readyState === 'complete'")


def wait_for(browser, script):
    """Wait until the JavaScript ``script`` returns true (or fail)."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, WAIT_S).until(lambda driver: driver.execute_script(script))


@pytest.mark.parametrize("name", PAGES)
def test_page_loads_without_console_errors(browser, site_url, name):
    open_page(browser, site_url, PAGES[name])
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(SCREENSHOTS / f"{name}.png"))
    assert browser.title, f"{PAGES[name]}: no title"
    errors = [
        entry["message"]
        for entry in browser.get_log("browser")
        if entry["level"] == "SEVERE"
    ]
    assert not errors, f"{PAGES[name]}: console errors: {errors}"


@pytest.mark.parametrize("name", PAGES)
def test_links_into_the_site_resolve(browser, site_url, name):
    open_page(browser, site_url, PAGES[name])
    hrefs = browser.execute_script(
        "return Array.from(document.querySelectorAll('a[href]'), a => a.href)"
    )
    internal = sorted({href for href in hrefs if href.startswith(site_url)})
    assert internal, f"{PAGES[name]}: no link into the site"
    broken = [href for href in internal if not resolves(href)]
    assert not broken, f"{PAGES[name]}: links that do not resolve: {broken}"


def resolves(href):
    """Whether the served site has the document ``href`` names and, where it
    names a fragment, an element of that id in the document."""
    url, _, fragment = href.partition("#")
    try:
        text = fetched(url)
    except urllib.error.HTTPError:
        return False
    if not fragment:
        return True
    ids = IdCollector()
    ids.feed(text)
    return urllib.parse.unquote(fragment) in ids.ids


@functools.cache
def fetched(url):
    """The text of ``url`` (from the local server)."""
    with urllib.request.urlopen(url, timeout=WAIT_S) as response:
        return response.read().decode("utf-8", errors="replace")


class IdCollector(HTMLParser):
    """The ``id`` (and anchors' ``name``) attributes of a document."""

    def __init__(self):
        super().__init__()
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key == "id" or (tag == "a" and key == "name"):
                self.ids.add(value)


@pytest.mark.parametrize("name", GALLERY_PAGES)
def test_every_gallery_figure_is_a_loaded_image(browser, site_url, name):
    open_page(browser, site_url, PAGES[name])
    figures = browser.execute_script(
        "return Array.from(document.querySelectorAll("
        "'img.sphx-glr-single-img, img.sphx-glr-multi-img'), "
        "img => [img.getAttribute('src'), img.complete, img.naturalWidth])"
    )
    assert figures, f"{PAGES[name]}: no figure"
    for src, complete, width in figures:
        assert complete and width > 0, f"{PAGES[name]}: figure {src} did not load"


def test_search_box_finds_multinomialnb(browser, site_url):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    open_page(browser, site_url, PAGES["front"])
    # The theme's search button opens its dialog; its box submits to search.html.
    button = next(
        element
        for element in browser.find_elements(By.CSS_SELECTOR, ".search-button__button")
        if element.is_displayed()
    )
    button.click()
    box = next(
        element
        for element in browser.find_elements(By.CSS_SELECTOR, "input[name='q']")
        if element.is_displayed()
    )
    box.send_keys("MultinomialNB", Keys.ENTER)
    wait_for(
        browser,
        "return document.querySelectorAll('#search-results li a').length > 0",
    )
    results = browser.execute_script(
        "return Array.from(document.querySelectorAll('#search-results li a'), "
        "a => a.getAttribute('href'))"
    )
    assert re.search(r"\bsearch\.html\?q=MultinomialNB\b", browser.current_url)
    assert any("fastnb.MultinomialNB.html" in href for href in results), results
