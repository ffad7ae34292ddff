"""Tests for tools/plot.py.

Run from the repository root (or from anywhere with -s pointing here):
    python3 -m unittest discover -s tests/tools -p 'test_plot*.py'
The tool runs under sys.executable; image tests are skipped where that
interpreter has no matplotlib.
"""

import importlib.util
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import types
import unittest

from toollib import iteration_row  # (and tools/ on sys.path)
from xfertools.core import files, names, sizes
from xfertools.plot import curves, draw, styles
from xfertools.result import machines, rows

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(REPO, "tools", "plot.py")
FIXTURES = os.path.join(REPO, "tests", "fixtures", "plot")
SWEEP = os.path.join(FIXTURES, "mpi_host_sweep.json")
ALL_PAIRS = os.path.join(FIXTURES, "memcpy_peer_allpairs_4gpu.json")
FAILED_ROW = os.path.join(FIXTURES, "host_staging_failed_row.json")
# mpi_host and nccl_sendrecv in mode:pingpong, stream, bidir (mpi_host also
# stream with pairs:2), and mpi_staged sequential and pipelined, named as
# before mpi_staged had exchange modes (host:pinned/mode:pipelined); 4 ranks.
MODES = os.path.join(FIXTURES, "exchange_modes_4rank.json")
# mpi_staged as named now: host:pinned|pageable/staging:sequential/
# mode:pingpong, and host:pinned/staging:pipelined in all three modes.
STAGED = os.path.join(FIXTURES, "mpi_staged_modes_2rank.json")
PIPELINED = "mpi_staged/host:pinned/staging:pipelined"
# The default run on a one-GPU H200 (docs/results): mpi_cuda_aware reaches 1.6 TB/s, the host
# paths 3 to 50 GB/s, host_staging has six variants.
ONE_GPU_DEFAULT = os.path.join(
    REPO, "docs", "results", "2026-11-23-h200-staged-failures", "default.json"
)

HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
NEEDS_MATPLOTLIB = unittest.skipUnless(
    HAVE_MATPLOTLIB,
    f"matplotlib not importable by {sys.executable} (apt-get install python3-matplotlib)",
)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Rows named mpi_host/bytes:N (before exchange modes) measured ping-pong:
# their series is mpi_host/mode:pingpong.
MPI_PP = "mpi_host/mode:pingpong"


def png_size(path):
    """(width, height) from the IHDR chunk; AssertionError if not a PNG."""
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == PNG_SIGNATURE, f"{path}: no PNG signature"
    assert head[12:16] == b"IHDR", f"{path}: first chunk is not IHDR"
    return struct.unpack(">II", head[16:24])


def result_doc(rows, xferbench=None):
    context = {"host_name": "cpu-node", "xferbench": xferbench}
    return {"context": context, "benchmarks": rows}


def ok_row(name, gbps, latency_us, **extra):
    fields = {"iterations": 100, "GB/s": gbps, "batch": 1, "bytes_per_second": gbps * 1e9}
    fields.update(latency_us=latency_us, **extra)
    return iteration_row(name, latency_us, **fields)


class ToolTestCase(unittest.TestCase):
    """Runs the tool in a scratch directory (not the repository root)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def write(self, name, text):
        with open(self.path(name), "w", encoding="utf-8") as f:
            f.write(text)
        return self.path(name)

    def run_tool(self, *args, env=None):
        return subprocess.run(
            [sys.executable, TOOL, *args],
            cwd=self.tmp.name,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def assertExit(self, result, status, *in_stderr):
        self.assertEqual(result.returncode, status, result.stderr)
        for text in in_stderr:
            self.assertIn(text, result.stderr)


@NEEDS_MATPLOTLIB
class CurvePlotTest(ToolTestCase):
    def test_sweep_gives_a_non_empty_png(self):
        result = self.run_tool(SWEEP, "-o", "sweep.png")
        self.assertExit(result, 0)
        width, height = png_size(self.path("sweep.png"))
        self.assertGreater(width, 0)
        self.assertGreater(height, 0)

    def test_svg_output(self):
        self.assertExit(self.run_tool(SWEEP, "-o", "sweep.svg"), 0)
        with open(self.path("sweep.svg"), encoding="utf-8") as f:
            svg = f.read()
        self.assertIn("<svg", svg)
        self.assertIn("mpi_host", svg)

    def test_different_inputs_give_different_images(self):
        self.assertExit(self.run_tool(SWEEP, "-o", "a.png"), 0)
        self.assertExit(self.run_tool(ALL_PAIRS, "-o", "b.png"), 0)
        with open(self.path("a.png"), "rb") as a, open(self.path("b.png"), "rb") as b:
            self.assertNotEqual(a.read(), b.read())

    def test_runs_overlaid_with_references(self):
        result = self.run_tool(
            SWEEP,
            FAILED_ROW,
            ALL_PAIRS,
            "--reference",
            "--filter",
            "mpi_host|pinned|p2p:on",
            "-o",
            "overlay.png",
        )
        self.assertExit(result, 0)
        self.assertGreater(png_size(self.path("overlay.png"))[0], 0)

    def test_failed_row_is_left_out_and_reported(self):
        result = self.run_tool(FAILED_ROW, "-o", "failed.png")
        self.assertExit(result, 0, "bytes:67108864", "validation failed")
        png_size(self.path("failed.png"))

    def test_filter_matching_nothing_is_an_error(self):
        result = self.run_tool(SWEEP, "--filter", "^nccl", "-o", "x.png")
        self.assertExit(result, 2, "no series match --filter")
        self.assertFalse(os.path.exists(self.path("x.png")))

    def test_panels_path_png(self):
        result = self.run_tool(MODES, SWEEP, "--panels", "path", "--reference", "-o", "panels.png")
        self.assertExit(result, 0)
        self.assertGreater(png_size(self.path("panels.png"))[0], 0)

    def test_matrix_heatmap_png(self):
        result = self.run_tool(ALL_PAIRS, "--matrix", "-o", "m.png")
        self.assertExit(result, 0)
        self.assertGreater(png_size(self.path("m.png"))[1], 0)


class MatrixTextTest(ToolTestCase):
    ON_256MIB = (
        "memcpy_peer p2p:on/dir:uni at 256 MiB (268435456 B): "
        "GB/s, 1 GB = 1e9 B\n"
        "run: gpu4-node, 4x NVIDIA H200\n"
        "rows: source GPU, columns: destination GPU\n"
        "src\\dst       0       1       2       3\n"
        "      0       -  131.42  130.87  129.95\n"
        "      1  131.18       -  130.56  130.03\n"
        "      2  130.74  130.29       -  131.61\n"
        "      3  129.88  130.12  131.35       -\n"
    )

    def test_default_is_p2p_on_uni_at_largest_size(self):
        result = self.run_tool(ALL_PAIRS, "--matrix")
        self.assertExit(result, 0)
        self.assertEqual(result.stdout, self.ON_256MIB)

    def test_text_flag_prints_the_same_table(self):
        result = self.run_tool(ALL_PAIRS, "--matrix", "--text")
        self.assertEqual(result.stdout, self.ON_256MIB)

    def test_size_forms_agree(self):
        for size in ("1MiB", "1M", "1048576", "1024K", "1mib"):
            with self.subTest(size=size):
                result = self.run_tool(ALL_PAIRS, "--matrix", "--size", size)
                self.assertExit(result, 0)
                lines = result.stdout.splitlines()
                self.assertIn("at 1 MiB (1048576 B)", lines[0])
                self.assertEqual(lines[4].split(), ["0", "-", "62.31", "61.87", "61.54"])

    def test_variant_is_selected_and_named(self):
        result = self.run_tool(
            ALL_PAIRS, "--matrix", "--variant", "p2p:off/dir:uni", "--size", "256MiB"
        )
        self.assertExit(result, 0)
        lines = result.stdout.splitlines()
        self.assertTrue(lines[0].startswith("memcpy_peer p2p:off/dir:uni"))
        self.assertEqual(lines[7].split(), ["3", "19.03", "19.16", "19.25", "-"])

    def test_failed_pair_shows_as_dash(self):
        with open(ALL_PAIRS, encoding="utf-8") as f:
            doc = json.load(f)
        for row in doc["benchmarks"]:
            if row["name"].startswith("memcpy_peer/p2p:on/dir:uni/pair:2to3/bytes:268435456/"):
                for counter in ("GB/s", "bytes_per_second", "latency_us"):
                    del row[counter]
                row.update(error_occurred=True, error_message="mismatch")
        path = self.write("one_failed.json", json.dumps(doc))
        result = self.run_tool(path, "--matrix")
        self.assertExit(result, 0)
        self.assertEqual(result.stdout.splitlines()[6].split(), ["2", "130.74", "130.29", "-", "-"])

    def test_variant_with_path(self):
        result = self.run_tool(
            FAILED_ROW, "--matrix", "--variant", "host_staging/host:pinned/mode:pipelined"
        )
        self.assertExit(result, 0)
        lines = result.stdout.splitlines()
        self.assertTrue(lines[0].startswith("host_staging host:pinned/mode:pipelined at 1 GiB"))
        self.assertEqual(lines[4].split()[:2], ["0", "-"])

    def test_unknown_variant_lists_those_present(self):
        result = self.run_tool(ALL_PAIRS, "--matrix", "--variant", "p2p:on/dir:bi")
        self.assertExit(result, 2, "p2p:on/dir:bi", "p2p:off/dir:uni")

    def test_size_not_in_run_lists_those_present(self):
        result = self.run_tool(ALL_PAIRS, "--matrix", "--size", "1G")
        self.assertExit(result, 2, "1 GiB", "sizes present: 1 MiB, 256 MiB")

    def test_text_written_to_output_file(self):
        result = self.run_tool(ALL_PAIRS, "--matrix", "--text", "-o", "m.txt")
        self.assertExit(result, 0)
        with open(self.path("m.txt"), encoding="utf-8") as f:
            self.assertEqual(f.read(), self.ON_256MIB)


class BadInputTest(ToolTestCase):
    def test_missing_file(self):
        result = self.run_tool("no_such_run.json", "-o", "x.png")
        self.assertExit(result, 2, "no_such_run.json", "no such file")

    def test_not_json(self):
        bad = self.write("notes.json", "this is not JSON\n")
        self.assertExit(self.run_tool(bad, "-o", "x.png"), 2, "notes.json", "not JSON")

    def test_json_without_benchmarks(self):
        other = self.write("other.json", '{"context": {}}')
        self.assertExit(
            self.run_tool(other, "-o", "x.png"), 2, "other.json", "no 'benchmarks' list"
        )

    def test_no_plottable_rows(self):
        rows = [
            {
                "name": "mpi_host/bytes:8/manual_time",
                "run_type": "iteration",
                "error_occurred": True,
                "error_message": "MPI_Send failed",
                "iterations": 0,
                "real_time": 0.0,
                "cpu_time": 0.0,
                "time_unit": "us",
            }
        ]
        empty = self.write("all_failed.json", json.dumps(result_doc(rows)))
        self.assertExit(
            self.run_tool(empty, "-o", "x.png"), 2, "all_failed.json", "no plottable rows"
        )
        self.assertExit(self.run_tool(empty, "--matrix"), 2, "all_failed.json", "no plottable rows")

    def test_bad_size(self):
        for size in ("lots", "1.5G", "1GB", "-4"):
            with self.subTest(size=size):
                result = self.run_tool(ALL_PAIRS, "--matrix", "--size", size)
                self.assertExit(result, 2, "bad size")

    def test_bad_image_name(self):
        self.assertExit(self.run_tool(SWEEP, "-o", "plot.txt"), 2, "plot.txt", ".png")

    def test_unknown_panels_value(self):
        self.assertExit(self.run_tool(SWEEP, "--panels", "mode", "-o", "x.png"), 2, "--panels")

    def test_curves_need_an_output(self):
        self.assertExit(self.run_tool(SWEEP), 2, "-o")


class WithoutMatplotlibTest(ToolTestCase):
    """A PYTHONPATH entry whose matplotlib raises ImportError hides the
    real one."""

    def setUp(self):
        super().setUp()
        fake = os.path.join(self.tmp.name, "fake", "matplotlib")
        os.makedirs(fake)
        with open(os.path.join(fake, "__init__.py"), "w") as f:
            f.write("raise ImportError('hidden by test_plot.py')\n")
        self.env = dict(os.environ, PYTHONPATH=os.path.dirname(fake))

    def test_curves_exit_3_with_install_hint(self):
        result = self.run_tool(SWEEP, "-o", "x.png", env=self.env)
        self.assertExit(result, 3, "matplotlib", "apt-get install python3-matplotlib")
        self.assertFalse(os.path.exists(self.path("x.png")))

    def test_heatmap_exit_3_with_install_hint(self):
        result = self.run_tool(ALL_PAIRS, "--matrix", "-o", "m.png", env=self.env)
        self.assertExit(result, 3, "apt-get install python3-matplotlib")

    def test_text_matrix_still_works(self):
        result = self.run_tool(ALL_PAIRS, "--matrix", env=self.env)
        self.assertExit(result, 0)
        self.assertEqual(result.stdout, MatrixTextTest.ON_256MIB)


class LoadingTest(ToolTestCase):
    """The rules that decide which number a point shows."""

    def series_of(self, rows):
        return curves.series_points(result_doc(rows))[:2]

    def test_series_key_drops_size_and_manual_time(self):
        series, _, _ = curves.series_points(files.load_result(ALL_PAIRS))
        key = "memcpy_peer/p2p:on/dir:uni/pair:0to1"
        self.assertEqual(len(series), 24)
        self.assertEqual(sorted(series[key]), [1 << 20, 256 << 20])

    def test_nan_and_infinity_tokens_load(self):
        text = (
            '{"context": {"host_name": "nan-host"}, "benchmarks": ['
            '{"name": "mpi_host/bytes:8/manual_time", "run_type": '
            '"iteration", "real_time": 0.5, "time_unit": "us", '
            '"GB/s": nan, "bytes_per_second": -nan, "latency_us": inf},'
            '{"name": "mpi_host/bytes:16/manual_time", "run_type": '
            '"iteration", "real_time": 1.5, "time_unit": "us", '
            '"GB/s": NaN, "bytes_per_second": Infinity, '
            '"latency_us": -Infinity, "label": "nan inf"}]}'
        )
        path = self.write("nonfinite.json", text)
        doc = files.load_result(path)
        self.assertEqual(doc["context"]["host_name"], "nan-host")
        self.assertEqual(doc["benchmarks"][1]["label"], "nan inf")
        series, _, _ = curves.series_points(doc)
        # Non-finite counters fall back to real_time; bandwidth is unknown.
        self.assertEqual(series[MPI_PP][8], (None, 0.5))
        self.assertEqual(series[MPI_PP][16], (None, 1.5))

    def test_median_of_repetitions_ignores_aggregates(self):
        name = "mpi_host/bytes:1024/manual_time"
        rows = [
            ok_row(name, g, 1024 / g / 1e3, repetition_index=i)
            for i, g in enumerate((4.0, 9.0, 5.0))
        ]
        rows.append(
            ok_row(
                name + "_median",
                99.0,
                0.01,
                run_name=name,
                run_type="aggregate",
                aggregate_name="median",
            )
        )
        series, _ = self.series_of(rows)
        gbps, latency = series[MPI_PP][1024]
        self.assertEqual(gbps, 5.0)
        self.assertAlmostEqual(latency, 1024 / 5.0 / 1e3)

    def test_median_aggregate_used_when_alone(self):
        name = "mpi_host/bytes:64/manual_time"
        rows = [
            ok_row(
                name + "_" + agg,
                g,
                64 / g / 1e3,
                run_name=name,
                run_type="aggregate",
                aggregate_name=agg,
            )
            for agg, g in (("mean", 3.0), ("median", 2.0), ("stddev", 0.5))
        ]
        series, _ = self.series_of(rows)
        self.assertEqual(series[MPI_PP][64][0], 2.0)

    def test_fallbacks_bytes_per_second_and_real_time(self):
        row = {
            "name": "nccl_sendrecv/bytes:4096/manual_time",
            "run_type": "iteration",
            "real_time": 2500.0,
            "time_unit": "ns",
            "bytes_per_second": 1.6384e9,
        }
        series, _ = self.series_of([row])
        gbps, latency = series["nccl_sendrecv/mode:pingpong"][4096]
        self.assertAlmostEqual(gbps, 1.6384)
        self.assertEqual(latency, 2.5)

    def test_failed_and_skipped_rows_are_counted_not_plotted(self):
        rows = [
            ok_row("mpi_host/bytes:8/manual_time", 0.04, 0.2),
            {
                "name": "mpi_host/bytes:16/manual_time",
                "error_occurred": True,
                "error_message": "boom",
            },
            {
                "name": "nccl_sendrecv/bytes:8/manual_time",
                "skipped": True,
                "skip_message": "no GPU",
            },
        ]
        series, failed = self.series_of(rows)
        self.assertEqual(list(series), [MPI_PP])
        self.assertEqual(list(series[MPI_PP]), [8])
        self.assertEqual(len(failed), 2)
        self.assertIn("boom", failed[0])

    def test_labels_from_context_and_unique(self):
        doc = files.load_result(SWEEP)
        self.assertEqual(
            machines.run_label(doc["context"], "run.json"), "gpu2-node, 2x NVIDIA H200"
        )
        self.assertEqual(machines.run_label({}, "run.json"), "run.json")
        self.assertEqual(
            curves.unique_labels(["a", "a", "b"], ["/1/r.json", "/2/r.json", "s.json"]),
            ["a (r.json) #1", "a (r.json) #2", "b"],
        )

    def test_parse_size_forms(self):
        self.assertEqual(sizes.parse_size("256MiB"), 268435456)
        self.assertEqual(sizes.parse_size("268435456"), 268435456)
        self.assertEqual(sizes.parse_size("1G"), 1 << 30)
        self.assertEqual(sizes.parse_size("8"), 8)


class StyleTest(unittest.TestCase):
    """Colour per path, line style per mode or variant, marker per pair."""

    KEYS = [
        "mpi_host/mode:pingpong",
        "mpi_host/mode:stream",
        "mpi_host/mode:bidir",
        "mpi_host/mode:stream/pairs:2",
        "nccl_sendrecv/mode:pingpong",
        "nccl_sendrecv/mode:stream",
        "mpi_staged/host:pinned/staging:sequential/mode:pingpong",
        "mpi_staged/host:pinned/staging:pipelined/mode:pingpong",
    ]

    def test_a_colour_per_variant_and_a_line_style_per_mode(self):
        looked = styles.series_styles(self.KEYS)
        # Every variant (an exchange mode too) has its own colour; pairs:2 shares its mode's.
        self.assertEqual(len({looked[k].color for k in self.KEYS}), len(self.KEYS) - 1)
        self.assertEqual(
            looked["mpi_host/mode:stream"].color, looked["mpi_host/mode:stream/pairs:2"].color
        )
        # A path's first variant keeps the path's colour, the same in every chart.
        self.assertEqual(looked["mpi_host/mode:pingpong"].color, styles.PATH_COLORS["mpi_host"])
        self.assertEqual(
            looked[f"{PIPELINED}/mode:pingpong"].color,  # first by name
            styles.PATH_COLORS["mpi_staged"],
        )
        modes = [looked[f"mpi_host/mode:{m}"].linestyle for m in ("pingpong", "stream", "bidir")]
        self.assertEqual(len(set(modes)), 3)
        self.assertEqual(modes[0], "-")  # ping-pong is the solid line
        nccl = [looked[f"nccl_sendrecv/mode:{m}"].linestyle for m in ("pingpong", "stream")]
        self.assertEqual(nccl, modes[:2])  # the same mode, the same style

    def test_the_six_host_staging_variants_have_six_colours(self):
        series, _, _ = curves.series_points(files.load_result(ONE_GPU_DEFAULT))
        staging = [k for k in series if k.startswith("host_staging/")]
        self.assertEqual(len(staging), 6)
        looked = styles.series_styles(series)
        self.assertEqual(len({looked[k].color for k in staging}), 6)
        self.assertEqual(len({looked[k].linestyle for k in staging}), 6)
        self.assertEqual(len({looked[k].color for k in series}), len(series))

    def test_pair_count_changes_the_marker_not_the_line_style(self):
        looked = styles.series_styles(self.KEYS)
        one, two = (looked["mpi_host/mode:stream"], looked["mpi_host/mode:stream/pairs:2"])
        self.assertEqual((one.color, one.linestyle), (two.color, two.linestyle))
        self.assertNotEqual(one.marker, two.marker)

    def test_a_path_keeps_its_colour_whatever_else_is_drawn(self):
        alone = styles.series_styles(["nccl_sendrecv/mode:pingpong"])
        mixed = styles.series_styles(self.KEYS)
        key = "nccl_sendrecv/mode:pingpong"
        self.assertEqual(alone[key], mixed[key])
        odd = styles.series_styles(["zz_path/x:1", "aa_path/x:1"] + self.KEYS)
        self.assertNotIn(odd["zz_path/x:1"].color, {odd[k].color for k in self.KEYS})
        self.assertNotEqual(odd["zz_path/x:1"].color, odd["aa_path/x:1"].color)

    def test_every_series_of_a_path_looks_different(self):
        series, _, _ = curves.series_points(files.load_result(ALL_PAIRS))
        looked = styles.series_styles(series)
        looks = {(s.color, s.linestyle, s.marker) for s in looked.values()}
        self.assertEqual(len(looks), len(series))  # 24 memcpy_peer series

    def test_runs_differ_by_marker_fill_and_shade_only(self):
        style = styles.series_styles(self.KEYS)["mpi_host/mode:stream"]
        first, second = styles.line_kwargs(style, 0), styles.line_kwargs(style, 1)
        for same in ("linestyle", "marker"):
            self.assertEqual(first[same], second[same])
        self.assertEqual(first["color"], style.color)
        self.assertNotEqual(first["fillstyle"], second["fillstyle"])
        self.assertNotEqual(first["color"], second["color"])
        self.assertEqual(styles.shade("#204080", 0.5), "#90a0c0")
        self.assertEqual(styles.shade("#204080", -0.5), "#102040")

    def test_only_stream_and_bidir_are_left_off_latency(self):
        thrown = [k for k in self.KEYS if names.is_throughput_only(k)]
        self.assertEqual(
            thrown,
            [
                "mpi_host/mode:stream",
                "mpi_host/mode:bidir",
                "mpi_host/mode:stream/pairs:2",
                "nccl_sendrecv/mode:stream",
            ],
        )

    def test_legacy_names_are_the_ping_pong_series(self):
        cases = {
            "mpi_host/bytes:8/manual_time": (MPI_PP, 8),
            "mpi_cuda_aware/bytes:64/manual_time": ("mpi_cuda_aware/mode:pingpong", 64),
            "mpi_host/mode:stream/pairs:2/bytes:8/manual_time": ("mpi_host/mode:stream/pairs:2", 8),
            "mpi_staged/host:pinned/mode:sequential/bytes:8/manual_time": (
                "mpi_staged/host:pinned/staging:sequential/mode:pingpong",
                8,
            ),
            "mpi_staged/host:pinned/mode:pipelined/pairs:2/bytes:8": (
                f"{PIPELINED}/mode:pingpong/pairs:2",
                8,
            ),
            f"{PIPELINED}/mode:stream/bytes:8/manual_time": (f"{PIPELINED}/mode:stream", 8),
            "mpi_staged/bytes:8/manual_time": ("mpi_staged", 8),
            "host_staging/host:pinned/mode:pipelined/pair:0to1/bytes:8": (
                "host_staging/host:pinned/mode:pipelined/pair:0to1",
                8,
            ),
        }
        for name, expected in cases.items():
            with self.subTest(name=name):
                row = rows.benchmark_name({"name": name})
                self.assertEqual((names.family_of(row), names.message_bytes(row)), expected)

    def test_filter_for_the_older_name_selects_the_ping_pong_series(self):
        for pattern in ("^mpi_host$", "^mpi_host/mode:pingpong$"):
            with self.subTest(filter=pattern):
                runs = curves.load_runs([MODES, SWEEP])
                curves.filter_series(runs, re.compile(pattern))
                self.assertEqual([list(run.series) for run in runs], [[MPI_PP], [MPI_PP]])
        self.assertIsNone(names.legacy_family("mpi_staged/mode:pingpong"))

    def test_filter_for_the_older_staged_name_selects_pipelined_ping_pong(self):
        for pattern in ("^mpi_staged/host:pinned/mode:pipelined$", f"^{PIPELINED}/mode:pingpong$"):
            with self.subTest(filter=pattern):
                runs = curves.load_runs([MODES, STAGED])
                curves.filter_series(runs, re.compile(pattern))
                self.assertEqual(
                    [list(run.series) for run in runs], [[f"{PIPELINED}/mode:pingpong"]] * 2
                )
        self.assertEqual(
            names.legacy_family(f"{PIPELINED}/mode:pingpong/pairs:2"),
            "mpi_staged/host:pinned/mode:pipelined/pairs:2",
        )
        self.assertIsNone(names.legacy_family(f"{PIPELINED}/mode:stream"))

    def test_staged_modes_have_the_line_styles_of_every_path(self):
        series, _, _ = curves.series_points(files.load_result(STAGED))
        looked = styles.series_styles(list(series) + self.KEYS)
        for mode, line in (("pingpong", "-"), ("stream", "--"), ("bidir", "-.")):
            with self.subTest(mode=mode):
                staged = looked[f"{PIPELINED}/mode:{mode}"]
                self.assertEqual(staged.linestyle, line)
                self.assertEqual(looked[f"mpi_host/mode:{mode}"].linestyle, line)
        pipelined = {
            looked[f"{PIPELINED}/mode:{m}"].marker for m in ("pingpong", "stream", "bidir")
        }
        self.assertEqual(len(pipelined), 1)  # one staging, one marker
        looks = {
            (s.color, s.linestyle, s.marker)
            for k, s in looked.items()
            if k.startswith("mpi_staged/")
        }
        self.assertEqual(len(looks), 5)  # every staged series its own look
        self.assertEqual(
            {k for k in series if names.is_throughput_only(k)},
            {f"{PIPELINED}/mode:stream", f"{PIPELINED}/mode:bidir"},
        )

    def test_panel_layout_has_one_column_per_path(self):
        runs = curves.load_runs([MODES, SWEEP])
        panels = styles.panel_layout(runs, "path")
        self.assertEqual([p.title for p in panels], ["mpi_host", "nccl_sendrecv", "mpi_staged"])
        self.assertEqual(
            panels[0].keys,
            [MPI_PP, "mpi_host/mode:stream", "mpi_host/mode:stream/pairs:2", "mpi_host/mode:bidir"],
        )
        shared = styles.panel_layout(runs, "none")
        self.assertEqual(len(shared), 1)
        self.assertEqual(shared[0].keys, [k for p in panels for k in p.keys])

    def test_by_default_a_run_of_several_paths_gets_a_column_per_path(self):
        several = curves.load_runs([MODES, SWEEP])
        self.assertEqual(styles.resolved_panels(several), "path")
        self.assertEqual(styles.panel_layout(several), styles.panel_layout(several, "path"))
        one = curves.load_runs([SWEEP])
        self.assertEqual(styles.resolved_panels(one), "none")
        self.assertEqual([p.title for p in styles.panel_layout(one)], [""])
        self.assertEqual(styles.resolved_panels(several, "none"), "none")

    def test_by_default_a_file_of_more_paths_than_xferbench_has_gets_one_panel(self):
        run = types.SimpleNamespace(
            series={f"path{k}/bytes:8": None for k in range(styles.MOST_AUTO_PANELS + 1)}
        )
        self.assertEqual(styles.resolved_panels([run]), "none")
        self.assertEqual(styles.resolved_panels([run], "path"), "path")


@NEEDS_MATPLOTLIB
class FigureLayoutTest(unittest.TestCase):
    """The figure the curves are drawn on, built in this process (Agg)."""

    def figure(self, files, panels="none", references=False):
        pyplot = draw.import_pyplot()
        fig = draw.build_curves_figure(pyplot, curves.load_runs(files), references, panels)
        self.addCleanup(pyplot.close, fig)
        return fig

    def lines(self, ax):
        return [line for line in ax.get_lines() if not line.get_label().startswith("theoretical")]

    def test_panels_path_draws_two_axes_per_path(self):
        fig = self.figure([MODES, SWEEP, ALL_PAIRS], "path")
        axes = draw.panel_axes(fig)
        self.assertEqual(len(axes), 2 * 4)
        titles = [ax.get_title() for ax in axes]
        for path in ("mpi_host", "nccl_sendrecv", "mpi_staged", "memcpy_peer"):
            self.assertEqual(sum(t.startswith(path + ":") for t in titles), 2, titles)

    def test_panels_none_draws_one_pair_of_axes(self):
        fig = self.figure([MODES, SWEEP], "none")
        self.assertEqual(len(fig.axes), 2)

    def test_by_default_each_path_of_a_run_gets_its_own_pair_of_axes(self):
        fig = self.figure([MODES, SWEEP], "auto")
        titles = [ax.get_title() for ax in draw.panel_axes(fig)]
        self.assertEqual(len(titles), 2 * 3, titles)
        fig = self.figure([SWEEP], "auto")
        self.assertEqual(len(fig.axes), 2)

    def test_latency_axes_leave_out_stream_and_bidir(self):
        ax_bw, ax_lat = self.figure([MODES]).axes
        self.assertEqual(len(self.lines(ax_bw)), 9)
        labels = [line.get_label() for line in self.lines(ax_lat)]
        self.assertEqual(len(labels), 4)
        self.assertFalse([label for label in labels if "stream" in label or "bidir" in label])
        notes = [text.get_text() for text in ax_lat.texts]
        self.assertTrue(any(n.startswith("5 stream/bidir series not shown") for n in notes), notes)

    def test_staged_latency_axes_leave_out_stream_and_bidir(self):
        ax_bw, ax_lat = self.figure([STAGED]).axes
        self.assertEqual(len(self.lines(ax_bw)), 5)
        labels = [line.get_label() for line in self.lines(ax_lat)]
        self.assertEqual(len(labels), 3)
        self.assertTrue(all("mode:pingpong" in label for label in labels), labels)
        notes = [text.get_text() for text in ax_lat.texts]
        self.assertTrue(any(n.startswith("2 stream/bidir series not shown") for n in notes), notes)

    def test_older_staged_run_overlays_the_ping_pong_lines(self):
        ax_bw, _ = self.figure([MODES, STAGED]).axes
        ping = [
            line
            for line in ax_bw.get_lines()
            if line.get_label().startswith(f"{PIPELINED}/mode:pingpong  [")
        ]
        self.assertEqual(len(ping), 2)  # the older run's mode:pipelined too
        first, second = ping
        self.assertEqual(first.get_linestyle(), second.get_linestyle())
        self.assertEqual(first.get_marker(), second.get_marker())
        self.assertNotEqual(first.get_fillstyle(), second.get_fillstyle())

    def test_overlaid_runs_share_colour_and_line_style(self):
        ax_bw, _ = self.figure([MODES, SWEEP]).axes
        ping = [line for line in ax_bw.get_lines() if line.get_label().startswith(MPI_PP + "  [")]
        self.assertEqual(len(ping), 2)  # the legacy run's mpi_host too
        first, second = ping
        self.assertEqual(first.get_linestyle(), second.get_linestyle())
        self.assertEqual(first.get_marker(), second.get_marker())
        self.assertNotEqual(first.get_fillstyle(), second.get_fillstyle())

    def test_every_path_of_the_one_gpu_default_run_stands_clear_of_the_axis(self):
        # On a linear axis up to 1.6 TB/s, host paths peaking at 3-50 GB/s sit within 3% of
        # the bottom; the default log axis puts every curve's peak well up the panel.
        ax_bw, _ = self.figure([ONE_GPU_DEFAULT]).axes
        self.assertEqual(ax_bw.get_yscale(), "log")
        peaks = self.peak_heights(ax_bw)
        self.assertEqual(len(peaks), 11)
        self.assertGreater(min(peaks.values()), 0.4, peaks)
        colors = {line.get_color() for line in self.lines(ax_bw)}
        self.assertEqual(len(colors), 11)

    def test_linear_bandwidth_axis_on_request(self):
        pyplot = draw.import_pyplot()
        fig = draw.build_curves_figure(
            pyplot, curves.load_runs([ONE_GPU_DEFAULT]), False, "none", "linear"
        )
        self.addCleanup(pyplot.close, fig)
        ax_bw = fig.axes[0]
        self.assertEqual((ax_bw.get_yscale(), ax_bw.get_ylim()[0]), ("linear", 0))
        peaks = self.peak_heights(ax_bw)
        self.assertLess(peaks["mpi_host/mode:pingpong  [vm, NVIDIA H200]"], 0.03)

    def test_log_axes_label_their_ticks_as_plain_numbers(self):
        # mpi_cuda_aware's latency spans 150-650 us, less than a decade: its minor ticks carry
        # the labels, and no label may be mathtext (text_as_written shows it raw).
        fig = self.figure([ONE_GPU_DEFAULT], "path")
        fig.canvas.draw()
        latency = next(
            ax
            for ax in draw.panel_axes(fig)
            if ax.get_title().startswith("mpi_cuda_aware: latency")
        )
        labels = [t.get_text() for t in latency.yaxis.get_ticklabels(which="both")]
        self.assertIn("200", labels)
        for ax in draw.panel_axes(fig):
            for label in ax.yaxis.get_ticklabels(which="both"):
                self.assertNotIn("$", label.get_text(), ax.get_title())

    def peak_heights(self, ax):
        """{line label: its highest point as a fraction of the axes' height}."""
        to_axes = ax.transData + ax.transAxes.inverted()
        return {
            line.get_label(): max(to_axes.transform(xy)[1] for xy in line.get_xydata())
            for line in self.lines(ax)
        }

    def test_panel_with_only_stream_rows_says_why_latency_is_empty(self):
        runs = curves.load_runs([MODES])
        curves.filter_series(runs, re.compile("stream"))
        pyplot = draw.import_pyplot()
        fig = draw.build_curves_figure(pyplot, runs, False, "path")
        self.addCleanup(pyplot.close, fig)
        latency = [ax for ax in draw.panel_axes(fig) if "latency" in ax.get_title()]
        self.assertEqual(len(latency), 2)
        for ax in latency:
            self.assertEqual(ax.get_lines(), [])
            self.assertIn("not a latency", ax.texts[0].get_text())


class ReferenceLineTest(unittest.TestCase):
    def run_from(self, path, keep):
        runs = curves.load_runs([path])
        curves.filter_series(runs, re.compile(keep))
        return runs[0]

    def test_nvlink_from_pair_count_on_h200(self):
        lines = curves.reference_lines(self.run_from(ALL_PAIRS, "p2p:on"))
        self.assertEqual(lines, [(150.0, "theoretical NVLink4 x6: 150 GB/s per direction")])

    def test_pcie_for_host_staging_and_p2p_off(self):
        for path, keep in ((FAILED_ROW, "pinned"), (ALL_PAIRS, "p2p:off")):
            with self.subTest(path=path):
                rates = [r for r, _ in curves.reference_lines(self.run_from(path, keep))]
                self.assertIn(63.0, rates)

    def test_none_without_gpu_context(self):
        run = curves.Run("x.json", "x", {}, {"memcpy_peer/pair:0to1": {}}, [])
        self.assertEqual(curves.reference_lines(run), [])

    def test_none_for_an_unknown_gpu_model(self):
        context = {
            "cuda": {
                "devices": [{"index": 0, "name": "Tesla T4"}],
                "pairs": [{"src": 0, "dst": 1, "link": "NVLink", "nvlink_count": 2}],
            }
        }
        run = curves.Run("x.json", "x", context, {"memcpy_peer/pair:0to1": {}}, [])
        self.assertEqual(curves.reference_lines(run), [])


NCCL_PP = "nccl_sendrecv/mode:pingpong"


def stated_doc():
    """mpi_host rows that state a ci95 (10% at 8 B, 50% at 1 KiB, 95% at 1 MiB, 0% at 1 GiB),
    nccl_sendrecv rows that state none."""
    rows = [
        ok_row(f"mpi_host/bytes:{size}/manual_time", size / 1e3 / t, t, ci95_pct=ci95)
        for size, t, ci95 in ((8, 2.0, 10.0), (1024, 4.0, 50.0), (1 << 20, 100.0, 95.0))
    ]
    rows.append(ok_row(f"mpi_host/bytes:{1 << 30}/manual_time", 10.0, 1e5, ci95_pct=0.0))
    rows += [
        ok_row(f"nccl_sendrecv/bytes:{size}/manual_time", size / 1e3 / 20.0, 20.0)
        for size in (8, 1024)
    ]
    return result_doc(rows)


class IntervalLoadingTest(unittest.TestCase):
    """Which 95% interval a point is drawn with."""

    def intervals(self, rows):
        return curves.series_points(result_doc(rows))[2]

    def test_a_row_gives_its_stated_ci95_and_a_row_without_none(self):
        intervals = curves.series_points(stated_doc())[2]
        self.assertEqual(intervals, {MPI_PP: {8: 10.0, 1024: 50.0, 1 << 20: 95.0, 1 << 30: 0.0}})

    def test_repetitions_give_the_interval_of_their_mean_from_their_spread(self):
        name = "mpi_host/bytes:64/manual_time"
        times = (10.0, 12.0, 14.0)
        rows = [ok_row(name, 1.0, t, repetition_index=i, ci95_pct=1.0) for i, t in enumerate(times)]
        # t(0.975, 2) = 4.303; standard error 2 / sqrt(3); mean 12
        expected = 100 * 4.302653 * 2 / 3**0.5 / 12
        self.assertAlmostEqual(self.intervals(rows)[MPI_PP][64], expected, places=3)

    def test_an_aggregate_row_gives_none(self):
        name = "mpi_host/bytes:64/manual_time"
        row = ok_row(
            name + "_median",
            2.0,
            0.032,
            run_name=name,
            run_type="aggregate",
            aggregate_name="median",
            ci95_pct=3.0,
        )
        self.assertEqual(self.intervals([row]), {})

    def test_a_filter_keeps_the_intervals_of_the_series_it_keeps(self):
        runs = curves.load_runs([MODES])
        self.assertGreater(len(runs[0].intervals), 1)
        curves.filter_series(runs, re.compile("^nccl"))
        self.assertTrue(runs[0].intervals)
        self.assertTrue(all(key.startswith("nccl") for key in runs[0].intervals))


@NEEDS_MATPLOTLIB
class IntervalDrawingTest(ToolTestCase):
    """Each point's 95% interval as a vertical bar in its series' colour."""

    def figure(self, document, panels="none"):
        path = self.write("run.json", json.dumps(document))
        pyplot = draw.import_pyplot()
        fig = draw.build_curves_figure(pyplot, curves.load_runs([path]), False, panels)
        self.addCleanup(pyplot.close, fig)
        return fig

    def bars(self, ax):
        """{(size, low, high)} of the interval bars on ax, and their colours."""
        found, colours = set(), set()
        for collection in ax.collections:
            if collection.get_gid() == draw.CI95_GID:
                for segment in collection.get_segments():
                    (x, low), (_, high) = segment
                    found.add((x, round(low, 6), round(high, 6)))
                colours |= {tuple(c) for c in collection.get_colors()}
        return found, colours

    def test_each_path_panel_draws_its_own_rows_intervals(self):
        axes = draw.panel_axes(self.figure(stated_doc(), "auto"))
        by_title = {ax.get_title(): ax for ax in axes}
        latency = [ax for title, ax in by_title.items() if title.startswith("mpi_host:")]
        nccl = [ax for title, ax in by_title.items() if title.startswith("nccl_sendrecv:")]
        self.assertEqual(len(axes), 4, list(by_title))
        self.assertIn((8, 1.8, 2.2), set().union(*(self.bars(ax)[0] for ax in latency)))
        self.assertEqual(set().union(*(self.bars(ax)[0] for ax in nccl)), set())

    def test_bars_for_rows_with_a_ci95_and_none_for_rows_without(self):
        ax_bw, ax_lat = self.figure(stated_doc()).axes
        latency, colours = self.bars(ax_lat)
        self.assertEqual(
            latency,
            {(8, 1.8, 2.2), (1024, 2.0, 6.0), (1 << 20, 10.0, 195.0)},  # 95%: cut at a tenth
        )
        self.assertEqual(len(colours), 1)
        mpi = next(line for line in ax_lat.get_lines() if line.get_label().startswith(MPI_PP))
        from matplotlib.colors import to_rgb

        self.assertEqual(colours.pop()[:3], to_rgb(mpi.get_color()))
        bandwidth, _ = self.bars(ax_bw)
        g = 8 / 1e3 / 2.0
        self.assertIn((8, round(g / 1.1, 6), round(g / 0.9, 6)), bandwidth)
        g = (1 << 20) / 1e3 / 100.0
        self.assertIn((1 << 20, round(g / 1.95, 6), round(10 * g, 6)), bandwidth)  # cut at 10x
        self.assertEqual({x for x, _, _ in bandwidth}, {8, 1024, 1 << 20})
        labels = [t.get_text() for t in self.figure(stated_doc()).legends[0].get_texts()]
        self.assertTrue(any(label.startswith("bar: 95% interval") for label in labels), labels)

    def test_no_bars_and_no_legend_entry_without_a_stated_ci95(self):
        fig = self.figure(result_doc([ok_row("mpi_host/bytes:8/manual_time", 0.004, 2.0)]))
        for ax in fig.axes:
            self.assertEqual(self.bars(ax), (set(), set()))
        labels = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
        self.assertFalse([label for label in labels if label.startswith("bar:")], labels)

    def test_svg_holds_the_bars_of_a_run_that_states_ci95_only(self):
        stated = self.write("stated.json", json.dumps(stated_doc()))
        self.assertExit(self.run_tool(stated, "-o", "stated.svg"), 0)
        self.assertExit(self.run_tool(SWEEP, "-o", "sweep.svg"), 0)  # no ci95 in its rows
        with open(self.path("stated.svg"), encoding="utf-8") as f:
            self.assertIn(f'<g id="{draw.CI95_GID}', f.read())
        with open(self.path("sweep.svg"), encoding="utf-8") as f:
            self.assertNotIn(f'<g id="{draw.CI95_GID}', f.read())


if __name__ == "__main__":
    unittest.main()
