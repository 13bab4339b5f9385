//! `fpdb` binary: everything lives in [`cli`]; this only hands over.

mod cli;

/// jemalloc for the whole process. An ingest allocates keys, words and records on every
/// thread and frees on one thread what another allocated: glibc's malloc spent more CPU on
/// that than jemalloc does. RocksDB's C++ allocates through the same `malloc` (the crate's
/// "unprefixed" build takes the name).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's settings, read when it starts (`MALLOC_CONF` in the environment still overrides
/// them): pages freed go back to the system after about a second, not ten. With its default
/// the peak memory of an ingest or of `serve` rose above glibc's; so it stays below, for a
/// smaller share of the CPU saved (figures: docs/performance.md, "The allocator").
#[cfg(not(target_env = "msvc"))]
#[export_name = "malloc_conf"]
static MALLOC_CONF: &[u8; 20] = b"dirty_decay_ms:1000\0";

fn main() -> std::process::ExitCode {
    cli::main()
}
