"""compare_behaviour.py BEFORE AFTER: what behaviour.sh recorded, compared.

--help, the refused flag's message and the row list must be identical; the runs' row names and
the set of JSON fields (keys, with row names folded) must be equal, and their console text equal
once numbers, spacing and the git revision are folded; the merges of recorded jobs must be
byte-identical except the revision, the date and what any two runs of one binary differ in
(the merge's own wall and CPU time, the load average, the executable's path). Prints each
difference and "differences: N"; exits 1 when N > 0.
"""

import difflib
import json
import re
import sys

if len(sys.argv) != 3 or sys.argv[1] == "--help":
    print(__doc__.strip())
    sys.exit(0 if sys.argv[1:2] == ["--help"] else 2)
A, B = sys.argv[1], sys.argv[2]
def keys(v, prefix=""):
    out = set()
    if isinstance(v, dict):
        for k, x in v.items():
            # visits are keyed by row name; benchmarks by index
            out |= {prefix + "/" + k} | keys(x, prefix + "/" + (k if not k.startswith(("mpi_","memcpy","host_","nccl")) else "ROW"))
    elif isinstance(v, list):
        for x in v: out |= keys(x, prefix + "[]")
    return out


def norm(line):
    """A console line with what timing decides folded: numbers, their units and prefixes, the
    spacing that their widths set, whether a row ran out of time, the git revision."""
    line = re.sub(r"git [0-9a-f]{12}", "git X", line)
    line = re.sub(r"\s+time-limited\s*$", "", line)
    line = re.sub(r"[0-9][0-9.e+-]*[kmunM]?", "N", line)
    line = re.sub(r"\bN (B|KiB|MiB|GiB)\b", "N SIZE", line)
    return re.sub(r"\s+", " ", line)


bad = 0
for f in ["help.txt", "bad.err", "list.out"]:
    a, b = open(f"{A}/{f}").read(), open(f"{B}/{f}").read()
    if a != b: print("DIFF", f); bad += 1
for f in ["run", "links", "pairs"]:
    a, b = json.load(open(f"{A}/{f}.json")), json.load(open(f"{B}/{f}.json"))
    if [r["name"] for r in a["benchmarks"]] != [r["name"] for r in b["benchmarks"]]: print("ROWS DIFF", f); bad += 1
    ka, kb = keys(a), keys(b)
    if ka != kb: print("KEYS DIFF", f, sorted(ka ^ kb)[:20]); bad += 1
    for s in ("err", "out"):
        la = [norm(l) for l in open(f"{A}/{f}.{s}") if "Load Average" not in l and "Running " not in l]
        lb = [norm(l) for l in open(f"{B}/{f}.{s}") if "Load Average" not in l and "Running " not in l]
        if la != lb:
            print("TEXT DIFF", f, s); bad += 1
            sys.stdout.writelines(list(difflib.unified_diff(la, lb, n=0))[:12])
for f in ["merge", "merge2"]:
    def clean(t):
        t = re.sub(r'"(git_revision|revision|date|xferbench_revision)": "[^"]*"', r'"\1": X', t)
        t = re.sub(r"git [0-9a-f]{12}", "git X", t)
        # what any two runs of one binary differ in: the merge's own wall and CPU time, the load
        t = re.sub(r'"(wall_time_s|cpu_time|executable)": [^,\n]*,?|"load_avg": \[[^]]*\]', r'"\1": X', t)
        return t
    a, b = clean(open(f"{A}/{f}.json").read()), clean(open(f"{B}/{f}.json").read())
    if a != b:
        print("MERGE DIFF", f); bad += 1
        sys.stdout.writelines(list(difflib.unified_diff(a.splitlines(1), b.splitlines(1), n=0))[:20])
print("differences:", bad)
sys.exit(1 if bad else 0)
