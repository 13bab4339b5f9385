//! `/metrics`: Prometheus (OpenMetrics text) counters and histograms of the server, and gauges
//! of the store read at scrape time.

use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: String,
    method: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReadLabels {
    what: &'static str,
}

type Latency = Family<RouteLabels, Histogram, fn() -> Histogram>;

/// The server's metrics.
pub(super) struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Latency,
    ingested: Counter,
    groups: Counter,
    group_docs: Histogram,
    group_seconds: Histogram,
    documents: Gauge,
    clusters: Gauge,
    store_bytes: Gauge<i64, std::sync::atomic::AtomicI64>,
    /// The store handle's lookup counters ([`fpdb::LookupStats`]), and their values at the
    /// last scrape (counters only move forward by the difference).
    reads: Family<ReadLabels, Counter>,
    reads_seen: std::sync::Mutex<fpdb::LookupStats>,
}

fn latency_histogram() -> Histogram {
    // 50 µs .. ~1.6 s
    Histogram::new(exponential_buckets(0.000_05, 2.0, 16))
}

impl Metrics {
    pub(super) fn new() -> Self {
        let mut registry = Registry::with_prefix("fpdb");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency: Latency = Family::new_with_constructor(latency_histogram);
        let ingested = Counter::<u64, AtomicU64>::default();
        let groups = Counter::<u64, AtomicU64>::default();
        let group_docs = Histogram::new(exponential_buckets(1.0, 2.0, 14));
        let group_seconds = Histogram::new(exponential_buckets(0.000_1, 2.0, 16));
        let documents = Gauge::default();
        let clusters = Gauge::default();
        let store_bytes = Gauge::default();
        let reads = Family::<ReadLabels, Counter>::default();
        registry.register(
            "lookup_reads",
            "What lookups (queries and ingests) read, by what: documents looked up (lookups), \
             postings found, simhash entries scanned, simhash candidates, records read to verify, \
             candidates verified",
            reads.clone(),
        );
        registry.register(
            "http_requests",
            "HTTP requests answered, by route, method and status",
            requests.clone(),
        );
        registry.register(
            "http_request_duration_seconds",
            "Time to answer a request, by route",
            latency.clone(),
        );
        registry.register(
            "ingested_documents",
            "Documents acknowledged by write requests (added, replaced or skipped)",
            ingested.clone(),
        );
        registry.register(
            "group_commits",
            "Group commits: chunks of write requests decided together and synced once",
            groups.clone(),
        );
        registry.register(
            "group_commit_documents",
            "Documents per group commit",
            group_docs.clone(),
        );
        registry.register(
            "group_commit_duration_seconds",
            "Time from a chunk's hold of the store to its sync",
            group_seconds.clone(),
        );
        registry.register("documents", "Documents stored", documents.clone());
        registry.register(
            "clusters",
            "Clusters (distinct similar_ids)",
            clusters.clone(),
        );
        registry.register(
            "store_bytes",
            "Bytes of the store on disk",
            store_bytes.clone(),
        );
        Metrics {
            registry,
            requests,
            latency,
            ingested,
            groups,
            group_docs,
            group_seconds,
            documents,
            clusters,
            store_bytes,
            reads,
            reads_seen: Default::default(),
        }
    }

    /// One request answered.
    pub(super) fn request(&self, route: &str, method: &str, status: u16, seconds: f64) {
        self.requests
            .get_or_create(&RequestLabels {
                route: route.to_string(),
                method: method.to_string(),
                status,
            })
            .inc();
        self.latency
            .get_or_create(&RouteLabels {
                route: route.to_string(),
            })
            .observe(seconds);
    }

    /// One chunk of `docs` documents decided and synced in `seconds`.
    pub(super) fn group_committed(&self, docs: u64, seconds: f64) {
        self.groups.inc();
        self.ingested.inc_by(docs);
        self.group_docs.observe(docs as f64);
        self.group_seconds.observe(seconds);
    }

    /// The text exposition, with the store's numbers as of now.
    pub(super) fn encode(&self, stats: &fpdb::Stats, reads: fpdb::LookupStats) -> String {
        {
            let mut seen = self
                .reads_seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            for ((what, now), (_, before)) in reads.counts().into_iter().zip(seen.counts()) {
                self.reads
                    .get_or_create(&ReadLabels { what })
                    .inc_by(now.saturating_sub(before));
            }
            *seen = reads;
        }
        self.documents.set(stats.documents as i64);
        self.clusters.set(stats.clusters as i64);
        self.store_bytes.set(stats.disk_bytes as i64);
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
