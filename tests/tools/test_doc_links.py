"""Every relative link in the documentation resolves to a file or folder that exists: README.md,
CONTRIBUTING.md, docs/*.md and every docs/results/**/README*. Links to the web, mail and
anchors within a page are not checked; a link's own #anchor is dropped before it is looked up.

    python3 -m unittest discover -s tests/tools -p 'test_doc_links.py'
"""

import glob
import os
import re
import unittest
from urllib.parse import unquote

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# [text](target) and [text](target "title"), and reference definitions: [label]: target
INLINE = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.M)
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)


def documents():
    found = [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "CONTRIBUTING.md")]
    found += sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    found += sorted(
        glob.glob(os.path.join(ROOT, "docs", "results", "**", "README*"), recursive=True)
    )
    return [path for path in found if os.path.isfile(path)]


def relative_links(text):
    text = CODE.sub("", text)  # code spans show link syntax; they link nothing
    for target in INLINE.findall(text) + REFERENCE.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue
        yield target


def broken_links(path):
    with open(path, encoding="utf-8") as stream:
        text = stream.read()
    broken = []
    for target in relative_links(text):
        file = unquote(target.split("#", 1)[0].split("?", 1)[0])
        base = ROOT if file.startswith("/") else os.path.dirname(path)
        if not os.path.exists(os.path.normpath(os.path.join(base, file.lstrip("/")))):
            broken.append(target)
    return broken


class DocLinksTest(unittest.TestCase):
    def test_the_documents_are_found(self):
        names = [os.path.relpath(p, ROOT) for p in documents()]
        self.assertIn("README.md", names)
        self.assertIn(os.path.join("docs", "results", "README.md"), names)

    def test_every_relative_link_resolves(self):
        for path in documents():
            with self.subTest(os.path.relpath(path, ROOT)):
                self.assertEqual(broken_links(path), [])

    def test_a_broken_link_is_found(self):
        self.assertEqual(
            list(relative_links("[a](no/such.md#x) [b](https://x.org) `[c](d.md)` [e](#f)")),
            ["no/such.md#x"],
        )


if __name__ == "__main__":
    unittest.main()
