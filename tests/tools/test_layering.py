"""support/ is layered: a folder includes only itself and the folders below it.

The order is the `layers:` line of support/README.md; every include of support/ and bench/ is
read, and there is no list of exceptions. One include root: "folder/file.hpp", never "../".
"""

import os
import re
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SUPPORT = os.path.join(ROOT, "support")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = (".hpp", ".cpp", ".cu", ".cuh", ".h")


def layers():
    with open(os.path.join(SUPPORT, "README.md"), encoding="utf-8") as f:
        found = re.search(r"^layers: (.+)$", f.read(), re.M)
    if not found:
        raise AssertionError("support/README.md has no 'layers:' line")
    return [name.strip() for name in found.group(1).split("->")]


def includes(directory):
    """(file relative to directory, the quoted include) for every source under directory."""
    for here, folders, names in os.walk(directory):
        folders.sort()
        for name in sorted(names):
            if name.endswith(SOURCES):
                path = os.path.join(here, name)
                with open(path, encoding="utf-8") as f:
                    for included in INCLUDE.findall(f.read()):
                        yield os.path.relpath(path, directory), included


def upward_includes(support, order):
    """What breaks the layering of the tree at `support`: an include naming no folder or a file
    that is not there, or one of a folder above the includer's."""
    found = []
    for source, included in includes(support):
        folder = source.split(os.sep)[0]
        target = included.split("/")[0]
        if "/" not in included or not os.path.isfile(os.path.join(support, included)):
            found.append(f"{source}: {included} names no folder")
        elif order.index(target) > order.index(folder):
            found.append(f"{source} includes {included}")
    return found


class Layering(unittest.TestCase):
    def test_every_folder_is_a_layer_and_the_top_is_nearly_empty(self):
        order = layers()
        folders = sorted(e.name for e in os.scandir(SUPPORT) if e.is_dir())
        self.assertEqual(sorted(order), folders)
        top = sorted(e.name for e in os.scandir(SUPPORT) if e.is_file())
        self.assertLessEqual(len(top), 4, top)
        self.assertFalse([name for name in top if name.endswith(SOURCES)], top)

    def test_support_includes_only_its_own_layer_and_those_below(self):
        found = upward_includes(SUPPORT, layers())
        self.assertEqual(found, [], "\n".join(found))

    def test_bench_includes_support_from_its_one_root(self):
        for source, included in includes(os.path.join(ROOT, "bench")):
            if "/" not in included:  # bench's own header
                self.assertTrue(os.path.isfile(os.path.join(ROOT, "bench", included)), source)
                continue
            self.assertNotIn("..", included, source)
            self.assertTrue(os.path.isfile(os.path.join(SUPPORT, included)), (source, included))

    def test_an_include_that_points_up_or_names_no_folder_is_caught(self):
        with tempfile.TemporaryDirectory() as tree:
            for folder, name, text in (
                ("base", "a.hpp", "#pragma once\n"),
                ("run", "b.hpp", '#include "base/a.hpp"\n'),
                ("base", "c.cpp", '#include "run/b.hpp"\n'),
                ("run", "d.cpp", '#include "b.hpp"\n'),
            ):
                os.makedirs(os.path.join(tree, folder), exist_ok=True)
                with open(os.path.join(tree, folder, name), "w", encoding="utf-8") as f:
                    f.write(text)
            found = upward_includes(tree, ["base", "run"])
        self.assertEqual(
            found, ["base/c.cpp includes run/b.hpp", "run/d.cpp: b.hpp names no folder"]
        )


if __name__ == "__main__":
    unittest.main()
