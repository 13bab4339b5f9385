"""Choose the quality gate's pairs (scripts/quality_fixture.sh runs this).

    quality_fixture.py FPDB OUT NAME=SET_DIR...

For each labeled set (corpus.jsonl + pairs.tsv): a seeded sample of every kind (8 pairs of each
templated copy kind and 30 siblings; 6 near-duplicate and 10 distinct pairs per kind of the
dev sets; 5 per kind of the generated sets; 3 per kind of the pages set, its smallest pages; 8
per kind of the short-page set (tools/src/bin/short_set.rs, half 0), its smallest pages; the
sites set whole, since a site's furniture is learned from all its pages), preferring documents of at most 2,500 characters
with one longer pair (to 8,000) per kind, so that the fixture stays small. Then, for each rule
of RULES, up to 2 pairs per kind that the defaults judge right and the defaults with that rule
switched off judge wrong, with every document of their group (a hard set's chain; documents
keep the corpus's order, which decides clusters), so that the gate fails when any of those rules is switched off. Writes OUT/NAME/{corpus.jsonl,pairs.tsv} and
OUT/floors.tsv (set, kind, label, pairs, floor: the pairs the defaults get right),
OUT/clusters.tsv (for sets with an articles.tsv: the pairs of pages in one cluster that show
different articles, at most, and one article, at least), OUT/rules.txt
(RULES, which tests/rules/quality_gate.rs switches off one by one), and prints
per rule the kinds that fall on the fixture when it is switched off.
"""
import json
import os
import random
import re
import subprocess
import urllib.parse
import sys

# The rules the gate must notice when switched off (the defaults of formats 4 to 8, 11 to 16,
# 19 and 20, and `headings` and `band_holders`).
# Not `--site-templates false`: each set is one ingest batch, whose pages learn their sites'
# furniture together (`--batch-furniture`), and switching it off changes no pair of the pages
# and sites sets; tests/rules/furniture.rs checks it on pages ingested one at a time. Not
# `--simhash-min-terms 1` either: the floor changes no labeled pair (it saves lookups);
# tests/rules/simhash_terms.rs checks it. Nor `--excerpt-copies false` and
# `--later-templates false`: they change what a store finds when pages come in another order
# (scripts/page_orders.sh), no labeled pair of the fixture's sets in their order;
# tests/rules/teasers.rs and tests/rules/site_knowledge.rs check them.
RULES = [
    "--headings false",
    "--excerpts false",
    "--same-site-templates false",
    "--batch-furniture false",
    "--page-teasers false",
    "--furniture false",
    "--reordered-lines false",
    "--teasers false",
    "--template-figures false",
    "--link-shape false",
    "--tw-phrases false",
    "--strong-resemblance 0",
    "--tight-clusters false",
    "--reflow false",
    "--t2s false",
    "--minhash-bands 0",
    "--verify-resemblance 90",
    "--band-holders false",
]


# Rules that decide a pair by what the store learned from its hosts' other pages: the pages of
# the hosts of a pair such a rule decides are kept whole (in the corpus's order).
HOST_RULES = ("--same-site-templates false", "--batch-furniture false")


def evaluate(fpdb, corpus, pairs, flags="", articles=None):
    more = ["--articles", articles] if articles else []
    r = subprocess.run(
        [fpdb, "eval", "--corpus", corpus, "--pairs", pairs, "--json", "-q", "--algo", "default", *more, *flags.split()],
        capture_output=True,
        check=True,
    )
    return json.loads(r.stdout)[0]


def group(i):
    """A hard set's chain or window pair shares the id up to its number."""
    m = re.match(r"(.*@\d+)[A-Z]?$", i)
    return m.group(1) if m else i


def wrong(report):
    return {(e["a"], e["b"]) for e in report["errors"]}


def right_count(k):
    said = k["predicted_duplicate"]
    return said if k["label"] == 1 else k["pairs"] - said


def choose(fpdb, name, src):
    corpus, pairs_path = os.path.join(src, "corpus.jsonl"), os.path.join(src, "pairs.tsv")
    docs = {}
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            docs[json.loads(line)["id"]] = line
    # A page's length is its HTML's (the pages set): the smallest pages keep the fixture small.
    length = {i: len(json.loads(l).get("text") or json.loads(l)["html"]) for i, l in docs.items()}
    with open(pairs_path, encoding="utf-8") as f:
        rows = [l.rstrip("\n").split("\t") for l in f]
    head, rows = rows[0], rows[1:]
    if name == "sites":
        # A site's furniture is learned from all its pages: the sites set is kept whole.
        return head, rows, list(docs.values())
    kinds = {}
    for r in rows:
        kinds.setdefault(r[3], []).append(r)
    rng = random.Random(20261126)

    def size(p):
        return max(length[p[0]], length[p[1]])

    keep = []
    for kind in sorted(kinds):
        pairs = kinds[kind]
        label = pairs[0][2]
        if name == "pages":
            n = 3
        elif name == "short":
            n = 8
        elif name.startswith(("robust", "hard")):
            n = 5
        elif kind == "template_sibling":
            n = 30
        elif name == "templated":
            n = 8
        else:
            n = 10 if label == "0" else 6
        short = [p for p in pairs if size(p) <= 2500]
        longer = [p for p in pairs if 2500 < size(p) <= 8000]
        rng.shuffle(short)
        rng.shuffle(longer)
        take = short[: n - 1] + longer[:1] if longer else short[:n]
        if len(take) < n:
            rest = sorted((p for p in pairs if p not in take), key=size)
            take += rest[: n - len(take)]
        keep += take
    judged = wrong(evaluate(fpdb, corpus, pairs_path))
    hosts = set()
    host = {i: urllib.parse.urlparse(json.loads(l).get("url") or "").netloc for i, l in docs.items()}
    for rule in RULES:
        flipped = wrong(evaluate(fpdb, corpus, pairs_path, rule)) - judged
        per_kind = {}
        for r in sorted(rows, key=size):
            if (r[0], r[1]) in flipped and r not in keep and per_kind.get(r[3], 0) < 2:
                per_kind[r[3]] = per_kind.get(r[3], 0) + 1
                keep.append(r)
                if rule in HOST_RULES:
                    hosts |= {host[i] for i in r[:2] if host[i]}
    groups = {group(i) for r in keep for i in r[:2]}
    # In the corpus's own order: which document comes first decides clusters.
    return head, keep, [line for i, line in docs.items() if group(i) in groups or host[i] in hosts]


def main():
    fpdb, out = sys.argv[1], sys.argv[2]
    floors, caught, clusters = [], {rule: [] for rule in RULES}, []
    for arg in sys.argv[3:]:
        name, src = arg.split("=", 1)
        head, keep, lines = choose(fpdb, name, src)
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "pairs.tsv"), "w", encoding="utf-8") as f:
            f.write("\t".join(head) + "\n")
            f.writelines("\t".join(r) + "\n" for r in keep)
        with open(os.path.join(d, "corpus.jsonl"), "w", encoding="utf-8") as f:
            f.writelines(lines)
        print(f"{name}: {len(keep)} pairs, {len(lines)} documents", file=sys.stderr)
        fixture = (os.path.join(d, "corpus.jsonl"), os.path.join(d, "pairs.tsv"))
        # Which article each page shows: every pair of pages in one cluster is judged too.
        articles = None
        if os.path.exists(os.path.join(src, "articles.tsv")):
            articles = os.path.join(d, "articles.tsv")
            kept = {json.loads(l)["id"] for l in lines}
            with open(os.path.join(src, "articles.tsv"), encoding="utf-8") as f, open(articles, "w", encoding="utf-8") as g:
                rows_a = f.read().splitlines()
                g.write("\n".join([rows_a[0]] + [r for r in rows_a[1:] if r.split("\t")[0] in kept]) + "\n")
        base = {}
        report = evaluate(fpdb, *fixture, articles=articles)
        for kind, k in sorted(report["kinds"].items()):
            base[kind] = right_count(k)
            floors.append((name, kind, k["label"], k["pairs"], base[kind]))
        if articles:
            c = report["cluster_pairs"]
            clusters.append((name, c["different"], c["same"]))
        for rule in RULES:
            r = evaluate(fpdb, *fixture, rule, articles)
            for kind, k in sorted(r["kinds"].items()):
                if right_count(k) < base[kind]:
                    caught[rule].append(f"{name}/{kind} {right_count(k)}/{base[kind]}")
            if articles and r["cluster_pairs"]["different"] > c["different"]:
                caught[rule].append(f"{name}/different pairs in one cluster {r['cluster_pairs']['different']} > {c['different']}")
    # The rules the gate must notice, for tests/rules/quality_gate.rs.
    with open(os.path.join(out, "rules.txt"), "w", encoding="utf-8") as f:
        f.writelines(rule + "\n" for rule in RULES)
    with open(os.path.join(out, "floors.tsv"), "w", encoding="utf-8") as f:
        f.write("set\tkind\tlabel\tpairs\tfloor\n")
        f.writelines("\t".join(str(x) for x in row) + "\n" for row in floors)
    # Sets with articles: the most pairs of different articles in one cluster, the fewest of one.
    with open(os.path.join(out, "clusters.tsv"), "w", encoding="utf-8") as f:
        f.write("set\tdifferent_at_most\tsame_at_least\n")
        f.writelines("\t".join(str(x) for x in row) + "\n" for row in clusters)
    for rule in RULES:
        print(f"{rule}: " + (", ".join(caught[rule]) or "NOT CAUGHT"), file=sys.stderr)


if __name__ == "__main__":
    main()
