#!/usr/bin/env python3
"""Writes lab/runs.csv: one row per raw GPU-run folder and per bench record
that `results/` held at commit c9d53eb (the folders left the working tree
there; `git show c9d53eb:results/<name>` brings one back).

Columns: run, date, GPU, commit, what, verdict. Filled from the folders
themselves (run scripts' header comments, bench JSON builds, gpu.txt) and
from STAGES.md's rows that name the run; an empty cell is unknown.

usage: lab/scripts/runs-index.py [COMMIT] > lab/runs.csv
"""
import csv
import json
import re
import subprocess
import sys

COMMIT = sys.argv[1] if len(sys.argv) > 1 else "c9d53eb"


def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, check=False).stdout


def show(path):
    return git("show", f"{COMMIT}:results/{path}")


def tree(path=""):
    """(kind, name) of each entry under results/<path>."""
    out = []
    for line in git("ls-tree", f"{COMMIT}:results/{path}").splitlines():
        meta, name = line.split("\t", 1)
        out.append((meta.split()[1], name))
    return out


def gpu_name(text):
    """H100, H200 or L4 from a device name or a folder's tag; else the text."""
    for kind in ("H100", "H200", "L4"):
        if re.search(rf"\b{kind}\b", text or "", re.I):
            return kind
    return text or ""


def clean(text, limit=220):
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def stage_rows():
    """(stage number, verdict, row text) of every STAGES.md table row."""
    rows = []
    for line in show("STAGES.md").splitlines():
        cells = [c.strip() for c in line.split(" | ")]
        if line.startswith("| ") and len(cells) >= 6 and not cells[0].startswith("| #") and "---" not in cells[0]:
            rows.append((cells[0].lstrip("| ").strip(), cells[-1].rstrip(" |"), line))
    return rows


def names_run(text, n):
    """Whether `text` names run `n` ("run 12", "runs 11 and 12", "runs 116-120")."""
    for m in re.finditer(r"\bruns? (\d+(?:(?:, | and |-|/)\d+)*)", text):
        nums = m.group(1)
        for part in re.split(r", | and |/", nums):
            if "-" in part:
                lo, hi = part.split("-", 1)
                if lo.isdigit() and hi.isdigit() and int(lo) <= n <= int(hi):
                    return True
            elif part.isdigit() and int(part) == n:
                return True
    return False


def script_summary(folder, files):
    """The header comment of the folder's run script, without its `Run N:` lead."""
    scripts = [f for f in files if re.fullmatch(r"run\d+\w*\.sh", f)] or [f for f in files if f.endswith(".sh")]
    if not scripts:
        readme = [f for f in files if f.lower() == "readme.md"]
        if readme:
            lines = [l for l in show(f"{folder}/{readme[0]}").splitlines() if l.strip() and not l.startswith("#")]
            return clean(" ".join(lines[:3])), ""
        return "", ""
    text = show(f"{folder}/{scripts[0]}")
    comment = []
    for line in text.splitlines()[1:]:
        if not line.startswith("#"):
            break
        comment.append(line.lstrip("# "))
    summary = re.sub(r"^Run \d+\w*( \([^)]*\))?:\s*", "", " ".join(comment))
    hashes = [h for h in re.findall(r"\b[0-9a-f]{7,12}\b", " ".join(comment)) if git("cat-file", "-t", h).strip() == "commit"]
    return clean(summary), (hashes[0] if hashes else "")


def json_build(folder, files):
    """(commit, device) of the first bench JSON in the folder that names them."""
    for f in files:
        if f.endswith(".json"):
            try:
                doc = json.loads(show(f"{folder}/{f}"))
            except ValueError:
                continue
            if isinstance(doc, dict):
                build = doc.get("build") or {}
                dev = doc.get("device")
                dev = dev.get("name") if isinstance(dev, dict) else dev
                if build.get("commit") or dev:
                    return (build.get("commit") or "")[:7], dev or ""
    return "", ""


def main():
    stages = stage_rows()
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["run", "date", "GPU", "commit", "what", "verdict"])
    rows = []
    for kind, name in tree():
        m = re.match(r"(\d{4}-\d{2}-\d{2})-(?:(h100|h200|l4)-)?(?:run(\d+)\w*?-?)?(.*)$", name)
        if kind == "tree" and m:
            date, gpu, run, slug = m.groups()
            files = [n for _, n in tree(name)]
            what, commit = script_summary(name, files)
            jcommit, dev = json_build(name, files)
            commit = jcommit or commit
            if "gpu.txt" in files:
                dev = show(f"{name}/gpu.txt").split(",")[0].strip() or dev
            gpu = gpu_name(dev or gpu)
            verdict = ""
            if run:
                hits = [(s, v) for s, v, line in stages if names_run(line, int(run))]
                verdict = "; ".join(f"stage {s}: {clean(v, 160)}" for s, v in hits[:2])
            what = clean(f"{slug}: {what}" if what else slug)
            rows.append((int(run) if run else 10**6, date, [run or name, date, gpu, commit, what, verdict]))
        elif kind == "blob" and re.fullmatch(r"\d{4}-\d{2}-\d{2}(-\d+)?-bench\.json", name):
            doc = json.loads(show(name))
            dev = doc.get("device")
            dev = dev.get("name") if isinstance(dev, dict) else dev
            logs = doc.get("logs") or {}
            verdict = "; ".join(f"{k}: {clean(v, 80)}" for k, v in sorted(logs.items()))
            stem = name[: -len("-bench.json")]
            what = f"bench record {stem} ({len(doc.get('rows', []))} rows, {len(doc.get('peers', []))} peer rows)"
            rows.append((10**6, doc.get("date", stem[:10]), [f"record {stem}", stem[:10], gpu_name(dev), ((doc.get("build") or {}).get("commit") or "")[:7], what, verdict]))
    rows.sort(key=lambda r: (r[1], r[0], r[2][0]))
    for _, _, row in rows:
        out.writerow(row)


if __name__ == "__main__":
    main()
