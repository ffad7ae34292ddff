"""The README stays short enough to read: at most MAX_WORDS words, counted as `wc -w` counts
them (runs of characters between white space).

    python3 -m unittest discover -s tests/tools -p 'test_readme_words.py'
"""

import os
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT, "README.md")
MAX_WORDS = 1800


def words(text):
    """What `wc -w` counts: maximal runs of non-white-space characters."""
    return len(text.split())


class ReadmeWordsTest(unittest.TestCase):
    def test_the_readme_is_at_most_the_limit(self):
        with open(README, encoding="utf-8") as stream:
            count = words(stream.read())
        self.assertLessEqual(
            count,
            MAX_WORDS,
            f"README.md has {count} words (wc -w), over the {MAX_WORDS} allowed: shorten it, or "
            "move detail into docs/",
        )

    def test_words_are_counted_as_wc_counts_them(self):
        self.assertEqual(words("a  b\tc\n\nd-e ±8.0% `x`"), 6)


if __name__ == "__main__":
    unittest.main()
