"""A Scrapy item pipeline that drops near-duplicate pages, with fpdb.

Enable it in a Scrapy project's settings.py:

    ITEM_PIPELINES = {"dedup_pipeline.NearDuplicatePipeline": 300}
    FPDB_PATH = "crawl-fingerprints.db"

Every item needs `url` and `text` (and may have `title`). The first copy of a page passes with
its `similar_id`; later near-duplicates are dropped (DropItem names the first copy). The store
survives restarts of the crawl. Without Scrapy installed the pipeline still runs (tests use it
so), raising its own DropItem.
"""

import fpdb

try:
    from scrapy.exceptions import DropItem
except ImportError:  # pragma: no cover - Scrapy is optional

    class DropItem(Exception):
        """Scrapy's DropItem, when Scrapy is not installed."""


class NearDuplicatePipeline:
    def __init__(self, path="fpdb.db"):
        self.path = path
        self.db = None

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings.get("FPDB_PATH", "fpdb.db"))

    def open_spider(self, spider):
        self.db = fpdb.open(self.path)

    def close_spider(self, spider):
        self.db.close()

    def process_item(self, item, spider):
        r = self.db.ingest(item["url"], item["text"], title=item.get("title"), url=item["url"])
        # The same page again ("already_stored"), or another text under a seen URL ("skipped").
        if r["status"] in ("already_stored", "skipped"):
            raise DropItem("already seen: %s" % item["url"])
        if r["duplicate_of"] is not None:
            raise DropItem("near-duplicate of %s" % r["duplicate_of"])
        item["similar_id"] = r["similar_id"]
        return item
