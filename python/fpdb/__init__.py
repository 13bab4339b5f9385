"""fpdb: a persistent near-duplicate text database (nshash, MinHash and simhash on RocksDB).

    import fpdb
    with fpdb.open("news.db") as db:
        db.ingest("a", "第一条 为了加强和规范政府督查工作，保障政令畅通，提高行政效能，制定本条例。")
        db.query("【转载】第一条 为了加强和规范政府督查工作，保障政令畅通，提高行政效能，制定本条例。")
        # {'duplicate': True, 'similar_id': 1, 'duplicate_of': 'a', 'matches': [...]}

Results are the objects the CLI prints: `ingest` returns the line `fpdb ingest --output`
writes, `query` what `fpdb query --json` prints. `Client(url)` speaks to `fpdb serve` with
the same methods.
"""

import json
import urllib.error
import urllib.parse
import urllib.request
from itertools import islice

from ._native import (
    FpdbError,
    InputError,
    LockedError,
    NotFoundError,
    SETTING_NAMES,
    SettingsError,
    Store as _Store,
)

__all__ = [
    "open",
    "Fpdb",
    "Client",
    "FpdbError",
    "InputError",
    "LockedError",
    "NotFoundError",
    "SettingsError",
    "SETTING_NAMES",
]


def _chunks(items, size):
    """Lists of up to `size` items of an iterable, in order."""
    it = iter(items)
    while True:
        chunk = list(islice(it, size))
        if not chunk:
            return
        yield chunk


def _date(value):
    """A publication time as the store reads it: a string as written, Unix seconds, or a
    datetime (a naive one is read as UTC)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(int(value))
    if hasattr(value, "isoformat"):
        return value.isoformat()
    raise InputError("a date is a string, Unix seconds or a datetime, not %r" % (value,))


def _doc_tuple(doc):
    """(id, text, title, url, date, publisher) from a dict {"id", "text", "title"?, "url"?,
    "date"?, "publisher"?} or a tuple (id, text[, title[, url[, date[, publisher]]]]). The
    publisher is the account that published the document on a shared host: what the store
    learns of a site is kept per publisher there."""
    if isinstance(doc, dict):
        if "id" not in doc or "text" not in doc:
            raise InputError("a document needs `id` and `text`: %r" % (sorted(doc),))
        return (
            str(doc["id"]),
            doc["text"],
            doc.get("title"),
            doc.get("url"),
            _date(doc.get("date")),
            doc.get("publisher"),
        )
    if isinstance(doc, (tuple, list)) and 2 <= len(doc) <= 6:
        doc = tuple(doc) + (None,) * (6 - len(doc))
        return (str(doc[0]), doc[1], doc[2], doc[3], _date(doc[4]), doc[5])
    raise InputError(
        "a document is a dict {id, text, title?, url?, date?, publisher?} or a tuple"
        " (id, text[, title[, url[, date[, publisher]]]])"
    )


def _query_tuple(item):
    """(text, title) from a text, a (text, title) tuple or a dict {"text", "title"?}."""
    if isinstance(item, str):
        return (item, None)
    if isinstance(item, dict):
        if "text" not in item:
            raise InputError("a query needs `text`: %r" % (sorted(item),))
        return (item["text"], item.get("title"))
    if isinstance(item, (tuple, list)) and 1 <= len(item) <= 2:
        return (item[0], item[1] if len(item) == 2 else None)
    raise InputError("a query is a text, a tuple (text[, title]) or a dict {text, title?}")


class Fpdb:
    """An open store (see `fpdb.open`). One writer per store at a time, across processes;
    read-only opens work while another process writes (they see what was synced when they
    opened)."""

    def __init__(self, path, create=True, read_only=False, cache_mib=128, memory_filters=False, **settings):
        self._store = _Store(
            str(path),
            create=create,
            read_only=read_only,
            cache_mib=cache_mib,
            memory_filters=memory_filters,
            **settings,
        )
        self.path = str(path)

    def ingest(self, id, text, title=None, url=None, replace=False, date=None, publisher=None):
        """Ingest one document; durable on return. Returns its result line (dict). `date`, its
        publication time, makes it its cluster's original when it is the earliest; a date
        before 1900 or more than a day ahead of now raises InputError. `publisher`: the account
        that published it on a shared host."""
        doc = (str(id), text, title, url, _date(date), publisher)
        return json.loads(self._store.ingest_chunks([[doc]], replace, 1))[0]

    def ingest_many(self, docs, replace=False, batch_size=1024):
        """Ingest an iterable of documents (dicts or tuples) in batches, through the same
        pipeline as `fpdb ingest`: the next batch read and fingerprinted on all cores while one
        is decided, each made durable while the next is decided, the GIL released. Returns
        the result lines, in order. A bad document raises InputError; the batches before its
        own are stored, nothing of its own batch is."""
        batches = ([_doc_tuple(d) for d in chunk] for chunk in _chunks(docs, batch_size))
        return json.loads(self._store.ingest_chunks(batches, replace, batch_size))

    def query(self, text, title=None):
        """Would `text` be a near-duplicate? Never writes. `title` counts for the algorithms
        that read one (punct-title, two-stage)."""
        return json.loads(self._store.query(text, title))

    def query_many(self, texts):
        """`query` of every text (looked up on all cores, the GIL released; each against the
        store, not against each other): a list in input order. An item is a text, a
        (text, title) tuple or a dict {"text", "title"?}."""
        return json.loads(self._store.query_many([_query_tuple(t) for t in texts]))

    def stats(self):
        return json.loads(self._store.stats())

    def report(self, largest=20, members=10, hosts=20):
        """The store's report as `fpdb report --json` gives it (dict): figures,
        `cluster_sizes` (clusters per size class), `days` (documents and duplicates per ingest
        day), `hosts` (host pairs whose pages copy each other), `largest` (the largest clusters
        with their members). Streams the store; memory does not grow with it."""
        return json.loads(self._store.report(largest, members, hosts))

    def lookup_stats(self):
        """What this handle's lookups read since it was opened (dict of totals: lookups,
        postings_found, simhash_scanned, simhash_candidates, records_read, verified), as the
        second summary line of `fpdb ingest` shows per document."""
        return json.loads(self._store.lookup_stats())

    def document(self, id):
        """The stored document with this id (dict), or None."""
        d = self._store.document(str(id))
        return None if d is None else json.loads(d)

    def cluster(self, similar_id, limit=1000):
        """{"similar_id", "size", "members", "truncated"}, or None."""
        c = self._store.cluster(int(similar_id), limit)
        return None if c is None else json.loads(c)

    def close(self):
        """Flush and close; later calls raise FpdbError."""
        self._store.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def open(path, create=True, read_only=False, cache_mib=128, memory_filters=False, **settings):  # noqa: A001 (fpdb.open on purpose)
    """Open (by default: create) the store at `path`. Settings (fixed at creation, checked at
    reopen; the CLI's flag names with `_`; algos is "nshash,minhash" or a list): {settings}.
    Not settings (this open only): cache_mib, the block cache; memory_filters, Bloom filters of
    every stored hash prefix kept in memory for long-running processes (as `fpdb serve
    --memory-filters`)."""
    return Fpdb(
        path,
        create=create,
        read_only=read_only,
        cache_mib=cache_mib,
        memory_filters=memory_filters,
        **settings,
    )


open.__doc__ = open.__doc__.replace("{settings}", ", ".join(SETTING_NAMES))


class Client:
    """`fpdb serve` over HTTP, with the methods of `Fpdb` (ingest, ingest_many, query, stats,
    lookup_stats, document, cluster). Errors the server reports raise FpdbError (InputError
    for 4xx)."""

    def __init__(self, url, token=None, timeout=60):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def _call(self, method, path, body=None, raw=False):
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                body = r.read()
                return body.decode("utf-8") if raw else json.loads(body)
        except urllib.error.HTTPError as e:
            try:
                msg = json.loads(e.read()).get("error", str(e))
            except ValueError:
                msg = str(e)
            if e.code == 404 and method == "GET":
                return None
            raise (InputError if 400 <= e.code < 500 else FpdbError)("%s (HTTP %d)" % (msg, e.code)) from None

    def ingest(self, id, text, title=None, url=None, replace=False, date=None, publisher=None):
        doc = {"id": str(id), "text": text, "title": title, "url": url, "date": _date(date)}
        if publisher is not None:
            doc["publisher"] = publisher
        return self._call("POST", "/v1/documents", {"documents": [doc], "replace": replace})["results"][0]

    def ingest_many(self, docs, replace=False, batch_size=2048, batch_bytes=8 << 20):
        """Ingest documents in requests of up to `batch_size` documents and about
        `batch_bytes` of text (the server's --max-body-bytes is 32 MiB by default): the server
        fingerprints a request's documents while it decides the ones before them, so fewer,
        larger requests go faster. The result lines, in order."""
        out = []
        docs = map(_doc_tuple, docs)
        pending = next(docs, None)
        while pending is not None:
            chunk, size = [], 0
            while pending is not None and len(chunk) < batch_size:
                size += 3 * len(pending[1]) if isinstance(pending[1], str) else 0
                if chunk and size > batch_bytes:
                    break
                chunk.append({"id": pending[0], "text": pending[1], "title": pending[2],
                              "url": pending[3], "date": pending[4], "publisher": pending[5]})
                pending = next(docs, None)
            body = {"documents": chunk, "replace": replace}
            out.extend(self._call("POST", "/v1/documents", body)["results"])
        return out

    def query(self, text, title=None):
        body = {"text": text}
        if title is not None:
            body["title"] = title
        return self._call("POST", "/v1/query", body)

    def query_many(self, texts, batch_size=256):
        out = []
        for chunk in _chunks(texts, batch_size):
            docs = []
            for i, t in enumerate(chunk):
                text, title = _query_tuple(t)
                d = {"id": str(i), "text": text}
                if title is not None:
                    d["title"] = title
                docs.append(d)
            body = {"documents": docs}
            for r in self._call("POST", "/v1/query/batch", body)["results"]:
                r.pop("id", None)
                out.append(r)
        return out

    def stats(self):
        return self._call("GET", "/v1/stats")

    def report(self):
        """The server's report (`GET /v1/report`), as `Fpdb.report()`."""
        return self._call("GET", "/v1/report")

    def lookup_stats(self):
        """The server's lookup counters (its `/metrics` `fpdb_lookup_reads_total`), as a dict
        like `Fpdb.lookup_stats()`."""
        out = {}
        head = 'fpdb_lookup_reads_total{what="'
        for line in self._call("GET", "/metrics", raw=True).splitlines():
            if line.startswith(head):
                what, _, value = line[len(head):].partition('"} ')
                out[what] = int(float(value))
        return out

    def document(self, id):
        return self._call("GET", "/v1/documents/" + urllib.parse.quote(str(id), safe=""))

    def cluster(self, similar_id, limit=1000):
        return self._call("GET", "/v1/clusters/%d?limit=%d" % (int(similar_id), limit))

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
