"""The Python package, for real: a store on disk, the `fpdb` binary (FPDB_BIN) beside it."""

import importlib.util
import json
import os
import pathlib
import re
import subprocess
import time

import pytest

import fpdb

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample.jsonl"
LAW = "第一条 为了加强和规范政府督查工作，保障政令畅通，提高行政效能，制定本条例。第二条 本条例所称政府督查，是指县级以上人民政府在法定职权范围内组织开展的监督检查。"
OTHER = "今天的天气非常好，我们一起去公园散步，看到了很多美丽的花朵和高大的树木，心情十分愉快。"


def fpdb_bin():
    b = os.environ.get("FPDB_BIN")
    if not b or not os.path.exists(b):
        pytest.skip("FPDB_BIN (the fpdb binary) is not set; scripts/test.sh sets it")
    return b


def sample_docs():
    with open(SAMPLE, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def key(line):
    return (
        line["id"],
        line["similar_id"],
        line["duplicate_of"],
        line["status"],
        sorted(m["id"] for m in line["matches"]),
    )


def test_ingest_query_and_reopen(tmp_path):
    path = tmp_path / "s.db"
    with fpdb.open(path) as db:
        a = db.ingest("a", LAW, title="条例", url="http://example.com/a")
        assert (a["status"], a["duplicate_of"]) == ("added", None)
        b = db.ingest("b", "【转载】\n" + LAW)
        assert (b["duplicate_of"], b["similar_id"]) == ("a", a["similar_id"])
        assert db.ingest("a", OTHER)["status"] == "skipped"
        assert db.ingest("a", OTHER, replace=True)["status"] == "replaced"
        assert db.stats()["documents"] == 2
        reads = db.lookup_stats()
        # a, b, a again (skipped: its id is stored, no lookup), a replaced (looked up).
        assert reads["lookups"] >= 3 and reads["records_read"] >= 1, reads
        assert reads["verified"] >= 1 and reads["simhash_scanned"] >= reads["simhash_candidates"]
    with fpdb.open(path, create=False, memory_filters=True, cache_mib=16) as db:
        q = db.query(LAW + "（来源：网络）")
        assert q["duplicate"] and q["duplicate_of"] == "b"
        assert db.query("一段从未出现过的全新文字，与任何文档都不相同，长度也足够长。")["duplicate"] is False
        many = db.query_many([LAW, "一段从未出现过的全新文字，与任何文档都不相同，长度也足够长。", OTHER])
        assert [m["duplicate"] for m in many] == [True, False, True]
        assert many[0] == db.query(LAW)
        doc = db.document("b")
        assert doc["id"] == "b" and doc["similar_id"] == q["similar_id"]
        assert db.document("nope") is None
        c = db.cluster(q["similar_id"])
        assert c["members"] == ["b"] and c["size"] == 1
        assert db.cluster(999999) is None
    with pytest.raises(fpdb.NotFoundError):
        fpdb.open(tmp_path / "missing.db", create=False)


def test_a_title_counts_for_the_algorithms_that_read_one(tmp_path):
    # punct-title: the punctuation context's 3 parts weigh 1 each, the title 1.5, 3 needed.
    # B keeps 2 of A's 3 parts: a candidate only with A's title.
    a = "第一条为了规范,制定本办法.第二条本办法适用于全国.第三条由国务院负责解释!"
    b = a.replace("解释", "解说")
    with fpdb.open(tmp_path / "s.db", algos="punct-title", verify_overlap=0) as db:
        db.ingest("a", a, title="某某条例")
        assert db.query(a)["duplicate"] is True
        assert db.query(b)["duplicate"] is False
        assert db.query(b, title="某某 条例")["duplicate"] is True
        assert db.query(b, title="另一个标题")["duplicate"] is False
        many = db.query_many([b, (b, "某某 条例"), {"text": b, "title": "另一个标题"}, (b,)])
        assert [m["duplicate"] for m in many] == [False, True, False, False]
        assert many[1] == db.query(b, title="某某 条例")
        with pytest.raises(fpdb.InputError, match="a query is a text"):
            db.query_many([42])
        with pytest.raises(fpdb.InputError, match="needs `text`"):
            db.query_many([{"title": "x"}])
    with pytest.raises(fpdb.SettingsError, match="weight check 0.2 needs"):
        fpdb.open(tmp_path / "w.db", algos="keywords", weight_check=0.2)
    fpdb.open(tmp_path / "w.db", algos="keywords-check", weight_check=0.2).close()
    with fpdb.open(tmp_path / "w.db") as db:
        assert db.stats()["options"]["key_algos"] == [{"algo": "keywords", "n": 10, "check": 200}]
    with pytest.raises(fpdb.SettingsError, match="weight_check"):
        fpdb.open(tmp_path / "w.db", weight_check=0.3)


def test_the_earliest_dated_copy_is_the_original(tmp_path):
    import datetime

    with fpdb.open(tmp_path / "s.db") as db:
        db.ingest("copy", "【转载】" + LAW, date="2024-06-01")
        line = db.ingest("orig", LAW, date=datetime.datetime(2023, 5, 26, 10, 30))
        assert line["previous_original"] == "copy"
        assert line["duplicate_of"] is None
        lines = db.ingest_many([{"id": "late", "text": LAW + "（完）", "date": 1_750_000_000}, ("none", LAW + "。")])
        assert [l["duplicate_of"] for l in lines] == ["orig", "orig"]
        assert db.query(LAW)["duplicate_of"] == "orig"
        with pytest.raises(fpdb.InputError, match="not a time"):
            db.ingest("bad", LAW, date="soon")
        # Outside the window of publication times (1900 to now plus a day): refused here.
        with pytest.raises(fpdb.InputError, match="earliest"):
            db.ingest("bad", LAW, date="0000-01-01T00:00:00Z")
        with pytest.raises(fpdb.InputError, match="later than now"):
            db.ingest("bad", LAW, date="2999-01-01")
        report = db.report(largest=1, members=2)
        assert report["documents"] == 4 and report["duplicates"] == 3
        assert [(c["size"], c["original"]) for c in report["largest"]] == [(4, "orig")]
        members = report["largest"][0]["members"]
        assert [(m["id"], m["original"]) for m in members] == [("copy", False), ("orig", True)]


def test_closed_store_and_bad_input(tmp_path):
    db = fpdb.open(tmp_path / "s.db")
    with pytest.raises(fpdb.InputError, match="empty"):
        db.ingest("x", "   ")
    with pytest.raises(fpdb.InputError, match="control character"):
        db.ingest("a\nb", LAW)
    with pytest.raises(fpdb.InputError):
        db.ingest_many([{"id": "ok", "text": LAW}, {"id": "no-text"}])
    with pytest.raises(fpdb.InputError):
        db.query("")
    assert db.stats()["documents"] == 0  # nothing of a refused batch was written
    # The batches before a refused one are stored (the library refuses this one: a control
    # character in its id), and ingesting goes on after it.
    with pytest.raises(fpdb.InputError, match="control character"):
        db.ingest_many([("ok", LAW), ("b\nad", OTHER), ("late", OTHER)], batch_size=1)
    assert db.stats()["documents"] == 1 and db.document("ok") and db.document("late") is None
    assert [l["status"] for l in db.ingest_many([("late", OTHER)])] == ["added"]
    db.close()
    db.close()
    with pytest.raises(fpdb.FpdbError, match="closed"):
        db.query(LAW)


def test_a_clock_override_that_cannot_be_read_is_refused(tmp_path, monkeypatch):
    for bad in ["abc", "-1", "18446744073709551615", "253402300800"]:
        monkeypatch.setenv("FPDB_NOW", bad)
        with pytest.raises(fpdb.SettingsError, match="FPDB_NOW"):
            fpdb.open(tmp_path / "c.db")
    monkeypatch.setenv("FPDB_NOW", "253402300799")
    db = fpdb.open(tmp_path / "c.db")
    db.ingest("a", LAW)
    db.close()


def test_settings_are_kept_and_checked(tmp_path):
    path = tmp_path / "s.db"
    fpdb.open(path, algos="nshash,simhash", nshash_n=4).close()
    with fpdb.open(path) as db:
        st = db.stats()["options"]
        assert st["nshash_n"] == 4 and st["minhash_bands"] == 0
        assert st["strong_resemblance_pct"] == 78
    fpdb.open(tmp_path / "f4.db", strong_resemblance=0).close()
    with fpdb.open(tmp_path / "f4.db") as db:
        assert db.stats()["options"]["strong_resemblance_pct"] == 0
    with pytest.raises(fpdb.SettingsError, match="strong_resemblance"):
        fpdb.open(tmp_path / "f4.db", strong_resemblance=80)
    with pytest.raises(fpdb.SettingsError, match="nshash_n"):
        fpdb.open(path, nshash_n=5)
    # The Taiwan-vocabulary fold, the link shape and template figures: on by default, off
    # kept, a different ask refused.
    for setting in ("tw_phrases", "link_shape", "template_figures"):
        with fpdb.open(tmp_path / "defaults.db") as db:
            assert db.stats()["options"][setting] is True
        off = tmp_path / f"no-{setting}.db"
        fpdb.open(off, **{setting: False}).close()
        with fpdb.open(off) as db:
            assert db.stats()["options"][setting] is False
        with pytest.raises(fpdb.SettingsError, match=setting):
            fpdb.open(off, **{setting: True})
    with pytest.raises(fpdb.SettingsError, match="unknown algorithm"):
        fpdb.open(tmp_path / "t.db", algos=["nshash", "bogus"])
    with pytest.raises(TypeError, match="unknown setting"):
        fpdb.open(tmp_path / "t.db", colour="blue")
    # The docstring names every setting `open` takes: it is made from the library's table.
    assert len(fpdb.SETTING_NAMES) >= 30
    for name in fpdb.SETTING_NAMES:
        assert name in fpdb.open.__doc__
    assert "{settings}" not in fpdb.open.__doc__


def cli_ingest_of_sample(tmp_path):
    """The lines `fpdb ingest data/sample.jsonl --output` writes into a new directory store."""
    out = tmp_path / "cli.jsonl"
    subprocess.run(
        [fpdb_bin(), "--db", str(tmp_path / "cli.db"), "-q", "ingest", str(SAMPLE), "--output", str(out)],
        check=True,
    )
    return [json.loads(l) for l in out.read_text(encoding="utf-8").splitlines()]


def test_ingest_many_equals_the_cli(tmp_path):
    docs = sample_docs()
    with fpdb.open(tmp_path / "py.db") as db:
        lines = db.ingest_many(docs, batch_size=7)
    assert [key(l) for l in lines] == [key(l) for l in cli_ingest_of_sample(tmp_path)]
    assert any(l["duplicate_of"] for l in lines)


def test_a_documents_publisher_reaches_the_store_as_the_clis_field_does(tmp_path):
    """Pages of one shared host, each naming its account (a dict key, a 6-tuple, the keyword
    of `ingest`): account S posts an article, account Z quotes it in three posts of its own,
    account W reposts it under two lines of comment. With the accounts as sites the quoted
    article is Z's furniture only and W's repost is found, as `fpdb ingest` reading the JSONL
    field finds it; with the field off the host is one site and the repost is missed."""
    def para(seed, n):
        return "".join(chr(0x4E00 + (seed * 7919 + i * 104729) % 20000) for i in range(n)) + "。"

    article = "\n".join(para(300 + j, 26) for j in range(6))
    docs = [{"id": "s", "url": "https://mp.example/s/s", "publisher": "S", "text": article}]
    for i in range(3):
        own = "\n".join(para(100 + 10 * i + j, 28) for j in range(8))
        docs.append({"id": "z%d" % i, "url": "https://mp.example/s/z%d" % i, "publisher": "Z",
                     "text": own + "\n" + article})
    repost = para(700, 30) + "\n" + para(701, 30) + "\n" + article
    path = tmp_path / "in.jsonl"
    rows = docs + [{"id": "w", "url": "https://mp.example/s/w", "publisher": "W", "text": repost}]
    path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in rows), encoding="utf-8")

    def cli(field):
        out = tmp_path / ("cli-%s.jsonl" % field)
        db = tmp_path / ("cli-%s.db" % field)
        subprocess.run([fpdb_bin(), "--db", str(db), "-q", "ingest", "--publisher-field=" + field,
                        str(path), "--output", str(out)], check=True)
        return [key(json.loads(l)) for l in out.read_text(encoding="utf-8").splitlines()]

    with fpdb.open(tmp_path / "py.db") as db:
        lines = db.ingest_many(docs[:2], batch_size=1)
        lines.extend(db.ingest_many([tuple(d[k] for k in ("id", "text")) + (None, d["url"], None, d["publisher"])
                                     for d in docs[2:]]))
        lines.append(db.ingest("w", repost, url="https://mp.example/s/w", publisher="W"))
    ours = [key(l) for l in lines]
    assert ours[-1][2] == "s"
    assert ours == cli("publisher")
    off = cli("")
    assert off[-1][2] is None


def redis_nodes():
    nodes = os.environ.get("FPDB_REDIS_NODES")
    if not nodes:
        if os.environ.get("FPDB_REQUIRE_REDIS"):
            raise AssertionError("FPDB_REQUIRE_REDIS is set but FPDB_REDIS_NODES is not")
        pytest.skip("no Redis cluster (FPDB_REDIS_NODES; scripts/test.sh starts one)")
    return nodes


def test_a_redis_namespace_equals_the_cli(tmp_path):
    url = "redis://%s/py-%d-%d" % (redis_nodes(), os.getpid(), time.time_ns() % 10**9)
    docs = sample_docs()
    with fpdb.open(url) as db:
        lines = db.ingest_many(docs, batch_size=7)
    assert [key(l) for l in lines] == [key(l) for l in cli_ingest_of_sample(tmp_path)]
    with fpdb.open(url, read_only=True) as db:
        assert db.stats()["documents"] == len(docs)
        assert db.query(docs[0]["text"])["duplicate"]
    with pytest.raises(fpdb.FpdbError, match="cannot connect"):
        fpdb.open("redis://127.0.0.1:1/x?retry=0")


def start_server(path, tmp_path):
    log = open(tmp_path / "serve.log", "w+")
    p = subprocess.Popen(
        [fpdb_bin(), "--db", str(path), "serve", "--listen", "127.0.0.1:0"],
        stderr=log,
    )
    for _ in range(300):
        log.seek(0)
        m = re.search(r"http://([0-9.]+:[0-9]+)", log.read())
        if m:
            return p, "http://" + m.group(1)
        if p.poll() is not None:
            break
        time.sleep(0.05)
    p.kill()
    log.seek(0)
    raise AssertionError("fpdb serve did not start: " + log.read())


def test_locked_read_only_and_client(tmp_path):
    path = tmp_path / "s.db"
    with fpdb.open(path) as db:
        db.ingest("a", LAW)
    server, url = start_server(path, tmp_path)
    try:
        with pytest.raises(fpdb.LockedError, match="locked by another process"):
            fpdb.open(path)
        client = fpdb.Client(url)
        r = client.ingest("b", "【转载】\n" + LAW)
        assert r["duplicate_of"] == "a"
        lines = client.ingest_many([("c", OTHER), {"id": "d", "text": OTHER + "（完）"}])
        assert [l["status"] for l in lines] == ["added", "added"]
        assert lines[1]["duplicate_of"] == "c"
        # A request per document when each is over the bytes a request may hold: their lines,
        # in order.
        split = client.ingest_many([("d", OTHER + "（完）"), ("c", OTHER)], batch_bytes=1)
        assert [(l["id"], l["status"]) for l in split] == [("d", "already_stored"), ("c", "already_stored")]
        assert client.query(LAW)["duplicate"] is True
        assert client.query_many([LAW, OTHER]) == [client.query(LAW), client.query(OTHER)]
        assert client.query_many([(LAW, "条例"), {"text": OTHER}]) == [
            client.query(LAW, title="条例"),
            client.query(OTHER),
        ]
        assert client.document("b")["similar_id"] == r["similar_id"]
        assert client.document("nope") is None
        assert client.cluster(r["similar_id"])["members"] == ["a", "b"]
        assert client.stats()["documents"] == 4
        served = client.report()
        assert served["documents"] == 4 and [c["size"] for c in served["largest"]] == [2, 2]
        reads = client.lookup_stats()
        assert set(reads) == {
            "lookups", "postings_found", "simhash_scanned", "simhash_candidates", "records_read", "verified"
        }
        # b, c, d ingested and the queries above, each looked up; b and d read their originals.
        assert reads["lookups"] >= 3 + 7 and reads["records_read"] >= 2, reads
        with pytest.raises(fpdb.InputError, match="text"):
            client._call("POST", "/v1/documents", {"id": "x"})
        # Read-only while the server writes: sees what was synced when it opened.
        with fpdb.open(path, read_only=True) as ro:
            assert ro.stats()["documents"] == 4
            assert ro.query(OTHER)["duplicate_of"] == "c"
            with pytest.raises(fpdb.FpdbError):
                ro.ingest("e", OTHER)
    finally:
        server.terminate()
        assert server.wait(timeout=30) == 0
    with fpdb.open(path) as db:
        assert db.stats()["documents"] == 4


def test_the_scrapy_style_pipeline_drops_near_duplicates(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "dedup_pipeline", ROOT / "examples" / "python" / "dedup_pipeline.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    pipe = mod.NearDuplicatePipeline(str(tmp_path / "crawl.db"))
    pipe.open_spider(None)
    kept, dropped = [], []
    items = [
        {"url": "http://a/1", "text": LAW, "title": "条例"},
        {"url": "http://b/2", "text": "【转载】" + LAW},
        {"url": "http://c/3", "text": OTHER},
        {"url": "http://a/1", "text": LAW},
    ]
    for item in items:
        try:
            kept.append(pipe.process_item(dict(item), None))
        except mod.DropItem as e:
            dropped.append(str(e))
    pipe.close_spider(None)
    assert [k["url"] for k in kept] == ["http://a/1", "http://c/3"]
    assert dropped == ["near-duplicate of http://a/1", "already seen: http://a/1"]
