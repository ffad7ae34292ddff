"""The README's example output keeps the shape of what xferbench really prints.

The example under the README's `<!-- example-output -->` marker is compared line by line with a
real run of the command it names: every line of the example must match a line of the real
output, in the same order, with numbers, the host name and the git revision free to differ. So
a change to the console (a renamed counter, a new column, another skip reason, colour codes)
fails here until the README shows it.
"""

import os
import re
import unittest

from xfer_testlib import launch

HERE = os.path.dirname(os.path.abspath(__file__))
README = os.path.join(
    os.environ.get("XFER_SOURCE_DIR", os.path.join(HERE, "..", "..")), "README.md"
)
MARKER = "<!-- example-output -->"
NUMBER = r"[0-9][0-9.]*[kmunM]?"


def example_and_command():
    """(lines of the example block, the xferbench arguments of the command above it)."""
    with open(README, encoding="utf-8") as f:
        text = f.read()
    before, marker, after = text.partition(MARKER)
    if not marker:
        raise AssertionError(f"README.md has no {MARKER} marker")
    block = re.search(r"```\n(.*?)```", after, re.S)
    command = re.findall(r"`mpirun -np 2 build/xferbench ([^`]*)`", before)
    if not block or not command:
        raise AssertionError("README.md: no example block or no command before it")
    return block.group(1).splitlines(), command[-1].split()


def without_time_limited(line):
    """A row may or may not run out of time on a given machine: its mark is left out."""
    return re.sub(r"\s+time-limited\s*$", "", line)


def line_pattern(line):
    """A regex that matches `line` with other numbers, host names and git revisions."""
    pattern = ""
    line = without_time_limited(line)
    for piece in re.split(r"(\s+|@vm\b|git [0-9a-f]{12}|[0-9][0-9.]*[kmunM]?|\b[KMG]iB\b)", line):
        if not piece:
            continue
        if piece.isspace():
            pattern += r"\s+"
        elif piece == "@vm":
            pattern += r"@\S+"
        elif piece.startswith("git "):
            pattern += r"git [0-9a-f]+"
        elif re.fullmatch(r"[0-9][0-9.]*[kmunM]?", piece):
            pattern += NUMBER
        elif re.fullmatch(r"[KMG]iB", piece):  # a summary's size: the peak may move
            pattern += r"(B|KiB|MiB|GiB)"
        else:
            pattern += re.escape(piece)
    return re.compile(r"\s*" + pattern + r"\s*$")


class ReadmeExample(unittest.TestCase):
    def test_example_output_has_the_shape_of_a_real_run(self):
        example, args = example_and_command()
        proc = launch(2, args, timeout=240)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        real = [without_time_limited(line) for line in (proc.stderr + proc.stdout).splitlines()]
        self.assertFalse(any("\x1b[" in line for line in real), "colour codes in a captured run")
        at = 0
        for line in example:
            if not line.strip():
                continue
            pattern = line_pattern(line)
            for i in range(at, len(real)):
                if pattern.match(real[i]):
                    at = i + 1
                    break
            else:
                self.fail(
                    f"README example line not in the real output (in order):\n  {line}\n"
                    f"real output:\n" + "\n".join(real)
                )

    def test_every_real_row_has_the_readme_columns(self):
        example, args = example_and_command()
        shapes = [
            line_pattern(re.sub(r"bytes:\d+", "bytes:8", line))
            for line in example
            if "/manual_time" in line
        ]
        proc = launch(2, args, timeout=240)
        rows = [line for line in proc.stdout.splitlines() if "/manual_time" in line]
        self.assertEqual(len(rows), 4, proc.stdout)
        for row in rows:
            row = without_time_limited(re.sub(r"bytes:\d+", "bytes:8", row))
            self.assertTrue(
                any(shape.match(row) for shape in shapes),
                f"a real row the README's rows do not show:\n  {row}",
            )


if __name__ == "__main__":
    unittest.main()
