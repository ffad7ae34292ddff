"""The trend page (tools/track report) in a real headless browser, Debian's chromium: loaded
from a file:// URL with no network, its text as the browser has it (--dump-dom), and a
screenshot a user would see. Skipped where chromium is missing, except where
XFER_EXPECT_CHROMIUM=1 (tools/test sets it as root, where it installs chromium).

XFER_TRACK_SCREENSHOT=PATH also keeps the screenshot at PATH (docs/images/track-trend.png is
made so, from tracklib.realistic_history()).

    python3 -m unittest discover -s tests/tools -p 'test_track_page.py'
"""

import html
import os
import re
import shutil
import struct
import subprocess
import tempfile
import unittest
import zlib

import tracklib
from tracklib import track

WIDTH, HEIGHT = 1000, 1400
REGRESSION_RED = (0xC6, 0x28, 0x28)  # the verdict box's border (page.COLOURS)
NOISE_BLUE = (0xBB, 0xDE, 0xFB)  # the noise band (page.BAND)
EXPECT = os.environ.get("XFER_EXPECT_CHROMIUM") == "1"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def browser(profile, *args):
    """chromium, headless, isolated in a fresh profile folder and kept off the network."""
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def read_png(path):
    """(width, height, rows of (r, g, b) pixels) of an 8-bit RGB or RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    position, chunks = 8, {}
    while position < len(data):
        (length,), kind = (
            struct.unpack(">I", data[position : position + 4]),
            data[position + 4 : position + 8],
        )
        chunks.setdefault(kind, []).append(data[position + 8 : position + 8 + length])
        position += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][0][:10])
    if depth != 8 or colour not in (2, 6):
        raise ValueError(f"PNG of depth {depth}, colour type {colour}: not read here")
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks[b"IDAT"]))
    stride = width * channels
    previous, rows = bytearray(stride), []
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up, corner = previous[x], previous[x - channels] if x >= channels else 0
            predictor = (0, left, up, (left + up) // 2, paeth(left, up, corner))[kind]
            line[x] = (line[x] + predictor) & 0xFF
        rows.append([tuple(line[x : x + 3]) for x in range(0, stride, channels)])
        previous = line
    return width, height, rows


@unittest.skipUnless(
    CHROMIUM or EXPECT, "needs a headless browser: apt-get install chromium (tools/test does)"
)
class TrendPageInBrowser(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not CHROMIUM:
            raise AssertionError("XFER_EXPECT_CHROMIUM=1 but chromium is not installed")
        tmp = tempfile.TemporaryDirectory()
        cls.addClassCleanup(tmp.cleanup)
        cls.dir = tmp.name
        made = tracklib.realistic_history()
        paths = tracklib.write_history(os.path.join(cls.dir, "runs"), made)
        cls.page = os.path.join(cls.dir, "trend.html")
        for args in (
            ["record", "--history", "history", *paths],
            ["report", "--history", "history", "-o", cls.page],
        ):
            done = track(*args, cwd=cls.dir)  # the page names the history as given: 'history'
            if done.returncode != 0:
                raise AssertionError(done.stderr)
        cls.url = "file://" + cls.page

    def test_the_browser_shows_the_verdict_first_and_every_family(self):
        done = browser(os.path.join(self.dir, "profile-dom"), "--dump-dom", self.url)
        self.assertEqual(done.returncode, 0, done.stderr[-2000:])
        text = html.unescape(re.sub(r"<[^>]+>", " ", done.stdout))
        verdict = text.index("REGRESSION: 1 family slower")
        for family in tracklib.FAMILIES:
            self.assertIn(family, text)
            self.assertLess(verdict, text.index(family))
        slower = re.escape(tracklib.FAMILIES[6]) + r"\s+regression \+\d+\.\d%"
        self.assertIsNotNone(re.search(slower, text), "no regression badge on the slower family")
        self.assertIn("change +1", text)  # the step of pinned sequential staging, marked
        self.assertIn("0018abc00018", text)  # with the commit where it began

    def test_the_screenshot_shows_a_red_verdict_on_top_and_the_noise_band(self):
        shot = os.path.join(self.dir, "trend.png")
        done = browser(
            os.path.join(self.dir, "profile-shot"),
            f"--screenshot={shot}",
            f"--window-size={WIDTH},{HEIGHT}",
            "--hide-scrollbars",
            self.url,
        )
        self.assertEqual(done.returncode, 0, done.stderr[-2000:])
        if os.environ.get("XFER_TRACK_SCREENSHOT"):
            shutil.copy(shot, os.environ["XFER_TRACK_SCREENSHOT"])
        width, height, rows = read_png(shot)
        self.assertEqual((width, height), (WIDTH, HEIGHT))
        colours = {pixel for row in rows[::4] for pixel in row[::4]}
        self.assertGreater(len(colours), 50, "a blank or flat page")
        top = {pixel for row in rows[: HEIGHT // 5] for pixel in row}
        self.assertIn(REGRESSION_RED, top, "no red verdict box in the top fifth of the page")
        self.assertIn(NOISE_BLUE, {pixel for row in rows for pixel in row})


if __name__ == "__main__":
    unittest.main()
