//! What a run's inputs count while they are read, besides the records: the caller reports
//! them at the end of the run.

/// One count of [`Counts`].
pub type Counter = std::sync::Arc<std::sync::atomic::AtomicU64>;

/// What a run's inputs count while they are read, shared: the counts go on while the inputs
/// are read, and whoever reports them loads them at the end.
#[derive(Clone, Default)]
pub struct Counts {
    /// WARC and ARC records passed over as not documents (requests, metadata, DNS lookups,
    /// images and other non-text payloads, empty payloads).
    pub not_documents: Counter,
    /// zstd frames read without a checksum (as libraries often write them): damage inside
    /// such a frame cannot be told from text, and its records are taken as decoded.
    pub unchecked_frames: Counter,
    /// Parquet pages read without a CRC (arrow-rs and, by default, pyarrow write none):
    /// damage inside such a page cannot be told from text. Pages with a CRC are verified, and
    /// a damaged one costs its row group, counted as lost.
    pub unchecked_pages: Counter,
}
