#!/usr/bin/env python3
"""xferbench's rerun spread against OSU's on the osu_latency rows, pooled over sessions.

    docs/results/tools/pooled_spread.py FILE [FILE ...] [--json OUT]

FILE is a targets.json of rerun_targets.py (default runs, each followed by an OSU round) or a
matched.json of matched_time.py (the six rows at osu_latency's
time). One session's spread over 5-12 rounds is itself uncertain (over 6 rounds, an equal true
spread reads anywhere from half to double), so this pools the variances of log time over the
sessions given (weighted by their degrees of freedom) and tests, per row, whether xferbench's
spread is larger than OSU's: the ratio of pooled spreads, its 90% interval and the one-sided
p-value of the F test (small: xferbench's is larger; large: OSU's is).
"""

import argparse
import json
import math
import sys

import ack_and_time  # this folder's: spread_pct
from scipy import stats


def pairs_of(path):
    """[(row, xferbench values, OSU values)] of one file, row as 'osu_latency H H 8'."""
    with open(path, encoding="utf-8") as f:
        document = json.load(f)
    found = []
    for session in document.values():
        for entry in session.get("osu", []):  # rerun_targets.py
            if entry["osu"].startswith("osu_latency") and entry.get("xferbench_values"):
                row = f"{entry['osu']} {entry['bytes']}"
                found.append((row, entry["xferbench_values"], entry["osu_values"]))
        for name, entry in session.get("matched", {}).items():  # matched_time.py
            buffers = "H H" if name.startswith("mpi_host") else "D D"
            row = f"osu_latency {buffers} {name.rsplit(':', 1)[1]}"
            found.append((row, entry["xferbench_us"], entry["osu_us"]))
    return found


def pooled(files, fail):
    rows = {}
    for path in files:
        try:
            found = pairs_of(path)
        except (OSError, ValueError) as e:
            fail(f"{path}: {e}")
        except (AttributeError, KeyError, TypeError):
            fail(f"{path}: expected a targets.json of rerun_targets.py or a matched.json")
        for row, mine, theirs in found:
            r = rows.setdefault(row, {"sessions": [], "x": [0.0, 0], "o": [0.0, 0]})
            sx, so = ack_and_time.spread_pct(mine), ack_and_time.spread_pct(theirs)
            r["sessions"].append({"file": path, "xferbench": sx, "osu": so, "rounds": len(mine)})
            r["x"][0] += (len(mine) - 1) * sx * sx
            r["x"][1] += len(mine) - 1
            r["o"][0] += (len(theirs) - 1) * so * so
            r["o"][1] += len(theirs) - 1
    result = {}
    for row, r in rows.items():
        (sum_x, df_x), (sum_o, df_o) = r["x"], r["o"]
        var_x, var_o = sum_x / df_x, sum_o / df_o
        f = var_x / var_o
        result[row] = {
            "sessions": r["sessions"],
            "xferbench_pct": math.sqrt(var_x),
            "osu_pct": math.sqrt(var_o),
            "ratio": math.sqrt(f),
            "ratio_90": [
                math.sqrt(f / stats.f.ppf(0.95, df_x, df_o)),
                math.sqrt(f / stats.f.ppf(0.05, df_x, df_o)),
            ],
            "p_xferbench_larger": float(stats.f.sf(f, df_x, df_o)),
            "df": [df_x, df_o],
        }
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--json", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    result = pooled(args.files, lambda line: parser.exit(2, f"{parser.prog}: {line}\n"))
    print(f"pooled over {len(args.files)} files: spread of log time (%), xferbench / OSU")
    for row in sorted(result, key=lambda r: (r.split()[2], int(r.split()[-1]))):
        e = result[row]
        lo, hi = e["ratio_90"]
        per = " ".join(f"{s['xferbench']:.2f}/{s['osu']:.2f}" for s in e["sessions"])
        print(
            f"  {row:28s} xferbench {e['xferbench_pct']:5.2f} OSU {e['osu_pct']:5.2f} ratio "
            f"{e['ratio']:.2f} (90%: {lo:.2f}-{hi:.2f}), p(xferbench larger) "
            f"{e['p_xferbench_larger']:.3f}, df {e['df'][0]}/{e['df'][1]}; per session {per}"
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1, allow_nan=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
